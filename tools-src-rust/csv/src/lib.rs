//! csv.parse: parses CSV text (RFC 4180: quoted fields, doubled quotes,
//! line breaks inside quotes, CRLF or LF) and returns its columns, with a
//! type and statistics for each, and its rows. Written against the toolhost
//! Rust SDK (abi/rust); built by `make plugins` as plugins/csv.wasm.
//!
//! Beside its tools it offers how it types columns, as resources
//! (csv://types, and csv://types/{type} for one type), and the prompt
//! csv.describe, which parses a CSV first so that the model reads its
//! columns' types and statistics instead of guessing them.

use serde::{Deserialize, Serialize};
use toolhost::{
    http, schema, Call, Contents, Error, Instances, Level, Message, Module, Prompt, PromptArgs,
    PromptResult, Resource, ResourceTemplate, Tool, Uri,
};

#[derive(Deserialize)]
struct Args {
    #[serde(default)]
    text: String,
    #[serde(default)]
    url: String,
    #[serde(default = "comma")]
    delimiter: String,
    #[serde(default = "yes")]
    header: bool,
    #[serde(default = "hundred")]
    max_rows: usize,
}

fn comma() -> String {
    ",".into()
}
fn yes() -> bool {
    true
}
fn hundred() -> usize {
    100
}

#[derive(Serialize, Default)]
struct Column {
    name: String,
    /// integer, number, boolean, string, or empty (no values at all).
    r#type: &'static str,
    values: usize,
    empty: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean: Option<f64>,
}

#[derive(Serialize)]
struct Out {
    columns: Vec<Column>,
    row_count: usize,
    rows: Vec<Vec<String>>,
    truncated: bool,
}

/// Splits text into records. A record's fields are owned strings; the
/// error names the line where the fault starts.
fn records(text: &str, delim: char, call: &mut Call) -> Result<Vec<Vec<String>>, Error> {
    let mut out = Vec::new();
    let (mut rec, mut field) = (Vec::new(), String::new());
    let (mut quoted, mut line, mut quote_line) = (false, 1usize, 0usize);
    let mut chars = text.char_indices().peekable();
    let mut field_started = false;
    while let Some((i, c)) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek().map(|p| p.1) == Some('"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => {
                    if c == '\n' {
                        line += 1;
                    }
                    field.push(c)
                }
            }
            continue;
        }
        match c {
            '"' if !field_started => {
                quoted = true;
                field_started = true;
                quote_line = line;
            }
            '"' => {
                return Err(Error::schema(format!(
                    "line {}: a quote inside an unquoted field",
                    line
                )))
            }
            c if c == delim => {
                rec.push(std::mem::take(&mut field));
                field_started = false;
            }
            '\r' if chars.peek().map(|p| p.1) == Some('\n') => {}
            '\n' => {
                rec.push(std::mem::take(&mut field));
                out.push(std::mem::take(&mut rec));
                field_started = false;
                line += 1;
                if out.len() % 10_000 == 0 {
                    call.progress(i as f64, text.len() as f64, "parsing");
                }
            }
            _ => {
                field.push(c);
                field_started = true;
            }
        }
    }
    if quoted {
        return Err(Error::schema(format!(
            "line {}: a quoted field is never closed",
            quote_line
        )));
    }
    if field_started || !rec.is_empty() {
        rec.push(field);
        out.push(rec);
    }
    Ok(out)
}

fn column(name: String, vals: &[&str]) -> Column {
    let mut c = Column {
        name,
        ..Column::default()
    };
    let (mut ints, mut nums, mut bools, mut sum) = (true, true, true, 0.0);
    for v in vals {
        let v = v.trim();
        if v.is_empty() {
            c.empty += 1;
            continue;
        }
        c.values += 1;
        ints &= v.parse::<i64>().is_ok();
        bools &= matches!(v.to_ascii_lowercase().as_str(), "true" | "false");
        match v.parse::<f64>() {
            Ok(n) if n.is_finite() => {
                sum += n;
                c.min = Some(c.min.map_or(n, |m| m.min(n)));
                c.max = Some(c.max.map_or(n, |m| m.max(n)));
            }
            _ => nums = false,
        }
    }
    c.r#type = match () {
        _ if c.values == 0 => "empty",
        _ if ints => "integer",
        _ if nums => "number",
        _ if bools => "boolean",
        _ => "string",
    };
    if c.r#type == "integer" || c.r#type == "number" {
        c.mean = Some(sum / c.values as f64);
    } else {
        c.min = None;
        c.max = None;
    }
    c
}

fn parse(call: &mut Call, a: Args) -> Result<Out, Error> {
    let mut d = a.delimiter.chars();
    let delim = match (d.next(), d.next()) {
        (Some(c), None) if c != '"' && c != '\n' && c != '\r' => c,
        _ => {
            return Err(Error::schema(
                "delimiter must be one character other than a quote or a line break",
            ))
        }
    };
    let mut recs = records(&a.text, delim, call)?;
    let names: Vec<String> = if a.header && !recs.is_empty() {
        recs.remove(0)
    } else {
        (1..=recs.first().map_or(0, Vec::len))
            .map(|i| format!("column{}", i))
            .collect()
    };
    for (i, r) in recs.iter().enumerate() {
        if r.len() != names.len() {
            let line = i + 1 + a.header as usize;
            return Err(Error::schema(format!(
                "record {} has {} fields, want {}",
                line,
                r.len(),
                names.len()
            )));
        }
    }
    let columns = names
        .into_iter()
        .enumerate()
        .map(|(i, n)| column(n, &recs.iter().map(|r| r[i].as_str()).collect::<Vec<_>>()))
        .collect();
    let row_count = recs.len();
    recs.truncate(a.max_rows);
    call.log(Level::Info, &format!("parsed {} records", row_count));
    Ok(Out {
        columns,
        row_count,
        truncated: row_count > recs.len(),
        rows: recs,
    })
}

/// csv.fetch: GETs the CSV at url through the host's governed egress and
/// parses it. A 429 or 503 is a transient error (the host retries), a
/// refusal the egress error, any other status but 200 a schema error.
fn fetch(call: &mut Call, mut a: Args) -> Result<Out, Error> {
    let resp = http::get(&a.url)?;
    if resp.status != 200 {
        return Err(Error::schema(format!("{} answered {}", a.url, resp.status)));
    }
    a.text = resp.text()?.to_string();
    parse(call, a)
}

fn module() -> Module {
    let options = |s: schema::Schema| {
        s.optional(
            "delimiter",
            schema::string()
                .description("the field separator, one character")
                .default_value(","),
        )
        .optional(
            "header",
            schema::boolean()
                .description("the first record names the columns")
                .default_value(true),
        )
        .optional(
            "max_rows",
            schema::integer()
                .description("at most this many rows are returned")
                .minimum(0.0)
                .default_value(100),
        )
    };
    let input =
        options(schema::object().required("text", schema::string().description("the CSV text")));
    let fetch_input = options(schema::object().required(
        "url",
        schema::string().description("an http or https URL of CSV text"),
    ));
    let col = schema::object()
        .required("name", schema::string())
        .required(
            "type",
            schema::string().one_of_values(vec!["integer", "number", "boolean", "string", "empty"]),
        )
        .required("values", schema::integer())
        .required("empty", schema::integer())
        .optional("min", schema::number())
        .optional("max", schema::number())
        .optional("mean", schema::number());
    let output = schema::object()
        .required("columns", schema::array(col))
        .required("row_count", schema::integer())
        .required("rows", schema::array(schema::array(schema::string())))
        .required("truncated", schema::boolean());
    let m = Module::new().tool(
        Tool::new("csv.parse", input)
            .title("Parse CSV")
            .description(
                "Parses CSV text (RFC 4180) and returns its columns, each with a type (integer, number, \
                 boolean, string) and statistics (values, empty cells, min, max, mean), and its first max_rows rows.",
            )
            .output_schema(output.clone())
            .timeout_ms(5000)
            .idempotent(true)
            .read_only(true)
            .instances(Instances::Reuse)
            .handler(parse),
    )
    .tool(
        Tool::new("csv.fetch", fetch_input)
            .title("Fetch and parse CSV")
            .description("Fetches CSV text from url (as far as the operator's egress grant allows) and parses it as csv.parse does.")
            .output_schema(output)
            .timeout_ms(10000)
            .idempotent(true)
            .read_only(true)
            .handler(fetch),
    );
    offers(m)
}

/// How `column` types a column, one rule per type, in the order it
/// tries them.
const TYPES: [(&str, &str); 5] = [
    ("empty", "every cell is empty (or only spaces)"),
    ("integer", "every non-empty cell is a whole number of at most 19 digits, with an optional sign (min, max and mean given)"),
    ("number", "every non-empty cell is a finite decimal number such as 1.5, -2 or 3e8 (min, max and mean given)"),
    ("boolean", "every non-empty cell is true or false, in any case"),
    ("string", "anything else"),
];

fn read_types(_: &mut Call, uri: &Uri) -> Result<Vec<Contents>, Error> {
    let mut text = String::from(
        "csv.parse gives each column the first type that fits all its non-empty cells \
         (cells are trimmed of spaces first; empty cells are counted apart):\n",
    );
    for (name, rule) in TYPES {
        text.push_str(&format!("- {}: {}\n", name, rule));
    }
    Ok(vec![
        Contents::text(uri.as_str(), text).mime_type("text/markdown")
    ])
}

fn read_type(_: &mut Call, uri: &Uri) -> Result<Vec<Contents>, Error> {
    let name = uri.var("type").unwrap_or("");
    match TYPES.iter().find(|t| t.0 == name) {
        Some((name, rule)) => Ok(vec![Contents::text(
            uri.as_str(),
            format!("{}: {}\n", name, rule),
        )
        .mime_type("text/plain")]),
        None => Err(Error::schema(format!(
            "no column type {:?}: one of empty, integer, number, boolean, string",
            name
        ))),
    }
}

/// csv.describe: the CSV's shape and column statistics, worked out by
/// csv.parse, then a few of its rows, and the question.
fn describe(call: &mut Call, args: &PromptArgs) -> Result<PromptResult, Error> {
    let a = Args {
        text: args.get("text").cloned().unwrap_or_default(),
        url: String::new(),
        delimiter: args.get("delimiter").cloned().unwrap_or_else(comma),
        header: true,
        max_rows: 5,
    };
    let out = parse(call, a)?;
    let mut msg = format!(
        "A CSV file of {} rows and {} columns:\n",
        out.row_count,
        out.columns.len()
    );
    for c in &out.columns {
        msg.push_str(&format!(
            "- {}: {}, {} values, {} empty",
            c.name, c.r#type, c.values, c.empty
        ));
        if let (Some(min), Some(max), Some(mean)) = (c.min, c.max, c.mean) {
            msg.push_str(&format!(", from {} to {}, mean {}", min, max, mean));
        }
        msg.push('\n');
    }
    msg.push_str(&format!("Its first {} rows:\n", out.rows.len()));
    for r in &out.rows {
        msg.push_str(&r.join(" | "));
        msg.push('\n');
    }
    msg.push_str(
        "\nSay in two or three sentences what this data is about, and point out anything odd \
         in it (empty cells, outliers, a column typed string that looks like it should be a number).",
    );
    Ok(PromptResult::new(vec![Message::user(msg)])
        .description(format!("describe a CSV of {} rows", out.row_count)))
}

/// The module's resources and prompts (beside its tools, in `module`).
fn offers(m: Module) -> Module {
    m.timeout_ms(5000)
        .resource(
            Resource::new("csv://types", "types")
                .title("Column types")
                .description("How csv.parse and csv.fetch choose a column's type.")
                .mime_type("text/markdown"),
            read_types,
        )
        .resource_template(
            ResourceTemplate::new("csv://types/{type}", "type")
                .title("One column type")
                .description("The rule of one column type: empty, integer, number, boolean or string.")
                .mime_type("text/plain"),
            read_type,
        )
        .prompt(
            Prompt::new("csv.describe")
                .title("Describe a CSV")
                .description("Asks what a CSV's data is about, with its columns' types and statistics worked out first.")
                .argument("text", "the CSV text, its first record naming the columns", true)
                .argument("delimiter", "the field separator, one character (default ,)", false),
            describe,
        )
}

toolhost::export!(module);

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &str) -> serde_json::Value {
        serde_json::from_slice(&module().dispatch("csv.parse", args.as_bytes())).unwrap()
    }

    #[test]
    fn parses_quotes_types_and_stats() {
        let v =
            run(r#"{"text":"name,age,score\r\n\"Smith, J\",30,1.5\n\"say \"\"hi\"\"\",,2.5\n"}"#);
        let r = &v["result"];
        assert_eq!(r["row_count"], 2);
        assert_eq!(r["rows"][0][0], "Smith, J");
        assert_eq!(r["rows"][1][0], "say \"hi\"");
        assert_eq!(r["columns"][1]["type"], "integer");
        assert_eq!(r["columns"][1]["empty"], 1);
        assert_eq!(r["columns"][2]["mean"], 2.0);
    }

    #[test]
    fn errors_are_schema_errors() {
        let v = run(r#"{"text":"a,b\n1,2,3\n"}"#);
        assert_eq!(v["error"]["kind"], "schema");
        let v = run(r#"{"text":"a\n\"open"}"#);
        assert_eq!(
            v["error"]["message"],
            "line 2: a quoted field is never closed"
        );
    }

    #[test]
    fn describe_prompt_carries_the_statistics() {
        let v: serde_json::Value = serde_json::from_slice(&module().dispatch(
            "prompts/get",
            br#"{"name":"csv.describe","arguments":{"text":"city;pop\nBrest;139000\nLyon;513000\n","delimiter":";"}}"#,
        ))
        .unwrap();
        let text = v["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap();
        assert!(text.starts_with("A CSV file of 2 rows and 2 columns:\n- city: string, 2 values, 0 empty\n- pop: integer, 2 values, 0 empty, from 139000 to 513000, mean 326000\n"), "{}", text);
        assert!(text.contains("Brest | 139000\n"), "{}", text);
        assert_eq!(v["result"]["description"], "describe a CSV of 2 rows");
    }

    #[test]
    fn manifest_declares_the_tool() {
        let m: serde_json::Value = serde_json::from_slice(&module().manifest()).unwrap();
        assert_eq!(m["tools"][0]["name"], "csv.parse");
        assert_eq!(m["tools"][0]["input_schema"]["required"][0], "text");
    }
}
