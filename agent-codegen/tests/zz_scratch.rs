use serde_json::{json, Value};
fn nest(kind: &str, n: usize) -> Value {
    let mut schema = json!({ "type": "string" });
    for i in 0..n {
        schema = match kind {
            "items" => json!({ "type": "array", "items": schema }),
            "props" => json!({ "type": "object", "properties": { "p": schema } }),
            "oneof" => json!({ "oneOf": [ schema, {"type":"integer"} ] }),
            "anyof" => json!({ "anyOf": [ schema, {"type":"object","properties":{"q":{"type":"integer"}}} ] }),
            "allof" => json!({ "allOf": [ {"type":"object","properties":{format!("k{i}"):schema}}, {"type":"object","properties":{"q":{"type":"integer"}}} ] }),
            _ => unreachable!(),
        };
    }
    json!({"type":"object","properties":{"x":schema}})
}
#[test]
fn scratch() {
    let n: usize = std::env::var("N").unwrap().parse().unwrap();
    let kind = std::env::var("KIND").unwrap();
    let text = nest(&kind, n).to_string();
    let r = agent_codegen::generate_types(&text, "x", "Root");
    println!("RESULT {}", match r { Ok(_) => "ok".to_string(), Err(e) => e[0].message.clone() });
}
