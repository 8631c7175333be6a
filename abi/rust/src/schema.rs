//! A small builder for the JSON Schemas of a manifest. Every builder turns
//! into a `serde_json::Value`; a schema written with `serde_json::json!`
//! works wherever one is taken.

use serde_json::{Map, Value};

/// A JSON Schema under construction.
#[derive(Clone, Debug)]
pub struct Schema(Map<String, Value>);

fn typed(t: &str) -> Schema {
    let mut m = Map::new();
    m.insert("type".into(), Value::from(t));
    Schema(m)
}

/// A closed object (`additionalProperties: false`, as the Go SDK's): add
/// properties with [`Schema::required`] and [`Schema::optional`].
pub fn object() -> Schema {
    typed("object")
        .set("properties", Value::Object(Map::new()))
        .set("additionalProperties", Value::Bool(false))
}
/// A string.
pub fn string() -> Schema {
    typed("string")
}
/// An integer.
pub fn integer() -> Schema {
    typed("integer")
}
/// A number.
pub fn number() -> Schema {
    typed("number")
}
/// A boolean.
pub fn boolean() -> Schema {
    typed("boolean")
}
/// An array of `items`.
pub fn array(items: impl Into<Value>) -> Schema {
    typed("array").set("items", items.into())
}
/// Any JSON value.
pub fn any() -> Schema {
    Schema(Map::new())
}

impl Schema {
    /// Sets any keyword.
    pub fn set(mut self, key: &str, v: impl Into<Value>) -> Schema {
        self.0.insert(key.into(), v.into());
        self
    }
    /// Sets `description`.
    pub fn description(self, d: &str) -> Schema {
        self.set("description", d)
    }
    /// Sets `minimum`.
    pub fn minimum(self, n: f64) -> Schema {
        self.set("minimum", n)
    }
    /// Sets `maximum`.
    pub fn maximum(self, n: f64) -> Schema {
        self.set("maximum", n)
    }
    /// Sets `enum`.
    pub fn one_of_values<V: Into<Value>>(self, vals: Vec<V>) -> Schema {
        self.set(
            "enum",
            Value::Array(vals.into_iter().map(Into::into).collect()),
        )
    }
    /// Sets `default`.
    pub fn default_value(self, v: impl Into<Value>) -> Schema {
        self.set("default", v)
    }
    /// Adds a property the object may have.
    pub fn optional(mut self, name: &str, s: impl Into<Value>) -> Schema {
        if let Some(Value::Object(p)) = self.0.get_mut("properties") {
            p.insert(name.into(), s.into());
        }
        self
    }
    /// Adds a property the object must have.
    pub fn required(self, name: &str, s: impl Into<Value>) -> Schema {
        let mut s = self.optional(name, s);
        let req =
            s.0.entry("required")
                .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = req {
            a.push(Value::from(name));
        }
        s
    }
    /// Allows properties the schema does not name.
    pub fn open(self) -> Schema {
        self.set("additionalProperties", true)
    }
}

impl From<Schema> for Value {
    fn from(s: Schema) -> Value {
        Value::Object(s.0)
    }
}
