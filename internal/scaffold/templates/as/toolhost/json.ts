// A copy of abi/assemblyscript/assembly/json.ts from toolhost, made by make abi-bundle.
// A small JSON reader and writer: the guest ABI speaks JSON both ways.
// Values keep object keys in their order; numbers are f64.

export enum Kind { Null, Bool, Number, String, Array, Object }

/** One JSON value. */
export class Value {
  kind: Kind = Kind.Null;
  b: bool = false;
  n: f64 = 0;
  s: string = "";
  items: Value[] = [];
  keys: string[] = [];

  static null(): Value { return new Value(); }
  static bool(b: bool): Value { const v = new Value(); v.kind = Kind.Bool; v.b = b; return v; }
  static number(n: f64): Value { const v = new Value(); v.kind = Kind.Number; v.n = n; return v; }
  static string(s: string): Value { const v = new Value(); v.kind = Kind.String; v.s = s; return v; }
  static array(): Value { const v = new Value(); v.kind = Kind.Array; return v; }
  static object(): Value { const v = new Value(); v.kind = Kind.Object; return v; }

  isNull(): bool { return this.kind == Kind.Null; }
  isString(): bool { return this.kind == Kind.String; }
  isNumber(): bool { return this.kind == Kind.Number; }
  isArray(): bool { return this.kind == Kind.Array; }
  isObject(): bool { return this.kind == Kind.Object; }

  /** The member named key of an object, or null. */
  get(key: string): Value | null {
    for (let i = this.keys.length - 1; i >= 0; i--) {
      if (this.keys[i] == key) return this.items[i];
    }
    return null;
  }
  /** Sets (appends) a member of an object; returns this for chaining. */
  set(key: string, v: Value): Value { this.keys.push(key); this.items.push(v); return this; }
  /** Appends an element to an array; returns this. */
  push(v: Value): Value { this.items.push(v); return this; }

  toString(): string { const w = new Writer(); w.value(this); return w.toString(); }
}

/** Parses JSON text; null when it is not exactly one valid value. */
export function parse(text: string): Value | null {
  const p = new Parser(text);
  p.ws();
  const v = p.value(0);
  if (v == null) return null;
  p.ws();
  return p.pos == text.length ? v : null;
}

const MAX_DEPTH = 128;

class Parser {
  pos: i32 = 0;
  constructor(public t: string) {}

  ws(): void {
    while (this.pos < this.t.length) {
      const c = this.t.charCodeAt(this.pos);
      if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) return;
      this.pos++;
    }
  }
  lit(word: string): bool {
    if (this.t.substr(this.pos, word.length) != word) return false;
    this.pos += word.length;
    return true;
  }
  value(depth: i32): Value | null {
    if (depth > MAX_DEPTH || this.pos >= this.t.length) return null;
    const c = this.t.charCodeAt(this.pos);
    if (c == 0x7b) return this.object(depth);
    if (c == 0x5b) return this.array(depth);
    if (c == 0x22) { const s = this.str(); return s == null ? null : Value.string(s); }
    if (this.lit("true")) return Value.bool(true);
    if (this.lit("false")) return Value.bool(false);
    if (this.lit("null")) return Value.null();
    return this.number();
  }
  object(depth: i32): Value | null {
    const v = Value.object();
    this.pos++;
    this.ws();
    if (this.pos < this.t.length && this.t.charCodeAt(this.pos) == 0x7d) { this.pos++; return v; }
    while (true) {
      this.ws();
      if (this.pos >= this.t.length || this.t.charCodeAt(this.pos) != 0x22) return null;
      const k = this.str();
      if (k == null) return null;
      this.ws();
      if (this.pos >= this.t.length || this.t.charCodeAt(this.pos) != 0x3a) return null;
      this.pos++;
      this.ws();
      const m = this.value(depth + 1);
      if (m == null) return null;
      v.set(k, m);
      this.ws();
      if (this.pos >= this.t.length) return null;
      const c = this.t.charCodeAt(this.pos++);
      if (c == 0x7d) return v;
      if (c != 0x2c) return null;
    }
  }
  array(depth: i32): Value | null {
    const v = Value.array();
    this.pos++;
    this.ws();
    if (this.pos < this.t.length && this.t.charCodeAt(this.pos) == 0x5d) { this.pos++; return v; }
    while (true) {
      this.ws();
      const m = this.value(depth + 1);
      if (m == null) return null;
      v.push(m);
      this.ws();
      if (this.pos >= this.t.length) return null;
      const c = this.t.charCodeAt(this.pos++);
      if (c == 0x5d) return v;
      if (c != 0x2c) return null;
    }
  }
  hex4(): i32 {
    if (this.pos + 4 > this.t.length) return -1;
    let n = 0;
    for (let i = 0; i < 4; i++) {
      const c = this.t.charCodeAt(this.pos++);
      let d = -1;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
      if (d < 0) return -1;
      n = (n << 4) | d;
    }
    return n;
  }
  // str reads a string at a quote, unescaped; a lone surrogate becomes U+FFFD.
  str(): string | null {
    this.pos++;
    const parts: string[] = [];
    let start = this.pos;
    while (this.pos < this.t.length) {
      const c = this.t.charCodeAt(this.pos);
      if (c == 0x22) {
        parts.push(this.t.substring(start, this.pos));
        this.pos++;
        return parts.join("");
      }
      if (c < 0x20) return null;
      if (c != 0x5c) { this.pos++; continue; }
      parts.push(this.t.substring(start, this.pos));
      this.pos++;
      if (this.pos >= this.t.length) return null;
      const e = this.t.charCodeAt(this.pos++);
      if (e == 0x22) parts.push("\"");
      else if (e == 0x5c) parts.push("\\");
      else if (e == 0x2f) parts.push("/");
      else if (e == 0x62) parts.push("\b");
      else if (e == 0x66) parts.push("\f");
      else if (e == 0x6e) parts.push("\n");
      else if (e == 0x72) parts.push("\r");
      else if (e == 0x74) parts.push("\t");
      else if (e == 0x75) {
        let u = this.hex4();
        if (u < 0) return null;
        if (u >= 0xd800 && u < 0xdc00) {
          const save = this.pos;
          let lo = -1;
          if (this.t.substr(this.pos, 2) == "\\u") { this.pos += 2; lo = this.hex4(); }
          if (lo >= 0xdc00 && lo < 0xe000) {
            parts.push(String.fromCharCodes([u, lo]));
          } else {
            this.pos = save;
            parts.push("\uFFFD");
          }
        } else if (u >= 0xdc00 && u < 0xe000) {
          parts.push("\uFFFD");
        } else {
          parts.push(String.fromCharCode(u));
        }
      } else return null;
      start = this.pos;
    }
    return null;
  }
  number(): Value | null {
    const start = this.pos;
    const t = this.t;
    if (this.pos < t.length && t.charCodeAt(this.pos) == 0x2d) this.pos++;
    const digits = (p: Parser): i32 => {
      const s = p.pos;
      while (p.pos < p.t.length) {
        const c = p.t.charCodeAt(p.pos);
        if (c < 0x30 || c > 0x39) break;
        p.pos++;
      }
      return p.pos - s;
    };
    const intStart = this.pos;
    const n = digits(this);
    if (n == 0 || (n > 1 && t.charCodeAt(intStart) == 0x30)) return null;
    if (this.pos < t.length && t.charCodeAt(this.pos) == 0x2e) {
      this.pos++;
      if (digits(this) == 0) return null;
    }
    if (this.pos < t.length && (t.charCodeAt(this.pos) | 0x20) == 0x65) {
      this.pos++;
      if (this.pos < t.length && (t.charCodeAt(this.pos) == 0x2b || t.charCodeAt(this.pos) == 0x2d)) this.pos++;
      if (digits(this) == 0) return null;
    }
    return Value.number(parseFloat(t.substring(start, this.pos)));
  }
}

/** Builds JSON text. Strings are escaped; a lone surrogate is written as U+FFFD. */
export class Writer {
  private parts: string[] = [];

  raw(json: string): Writer { this.parts.push(json); return this; }
  string(s: string): Writer { this.parts.push(quote(s)); return this; }
  number(n: f64): Writer {
    if (!isFinite(n)) { this.parts.push("null"); return this; }
    if (n == Math.floor(n) && Math.abs(n) < 9007199254740992) this.parts.push((<i64>n).toString());
    else this.parts.push(n.toString());
    return this;
  }
  value(v: Value): Writer {
    switch (v.kind) {
      case Kind.Null: this.parts.push("null"); break;
      case Kind.Bool: this.parts.push(v.b ? "true" : "false"); break;
      case Kind.Number: this.number(v.n); break;
      case Kind.String: this.string(v.s); break;
      case Kind.Array: {
        this.parts.push("[");
        for (let i = 0; i < v.items.length; i++) {
          if (i > 0) this.parts.push(",");
          this.value(v.items[i]);
        }
        this.parts.push("]");
        break;
      }
      case Kind.Object: {
        this.parts.push("{");
        for (let i = 0; i < v.keys.length; i++) {
          if (i > 0) this.parts.push(",");
          this.string(v.keys[i]);
          this.parts.push(":");
          this.value(v.items[i]);
        }
        this.parts.push("}");
        break;
      }
    }
    return this;
  }
  toString(): string { return this.parts.join(""); }
}

const HEX = "0123456789abcdef";

/** s as a JSON string literal. */
export function quote(s: string): string {
  const out: string[] = ["\""];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc = "";
    if (c == 0x22) esc = "\\\"";
    else if (c == 0x5c) esc = "\\\\";
    else if (c == 0x0a) esc = "\\n";
    else if (c == 0x0d) esc = "\\r";
    else if (c == 0x09) esc = "\\t";
    else if (c < 0x20) esc = "\\u00" + HEX.charAt(c >> 4) + HEX.charAt(c & 15);
    else if (c >= 0xd800 && c < 0xdc00) {
      const lo = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (lo >= 0xdc00 && lo < 0xe000) { i++; continue; }
      esc = "\uFFFD";
    } else if (c >= 0xdc00 && c < 0xe000) esc = "\uFFFD";
    else continue;
    out.push(s.substring(start, i));
    out.push(esc);
    start = i + 1;
  }
  out.push(s.substring(start));
  out.push("\"");
  return out.join("");
}
