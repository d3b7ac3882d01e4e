//! What the generated checks call, pinned at its bounds: exact number comparison (and where
//! no exact answer is at hand: NaN, floats at or past 2^53, integers past what a float
//! holds), JSON number equality, whole `multipleOf`, lengths in chars, `uniqueItems` and its
//! limit, and untyped values read from their text. A `true` here that should be `false` is a
//! value the fast path lets through without the validator.

use agent_contracts_contract::__private::checks::{
    Number, bound, chars, compare, equal, matches, multiple_of, pattern, raw_len, raw_number,
    raw_str, raw_type, unique,
};
use agent_contracts_contract::RawJson;
use std::cmp::Ordering::{Equal, Greater, Less};
use std::sync::LazyLock;

const EXACT: f64 = 9_007_199_254_740_992.0;
const BIG: i128 = 9_007_199_254_740_992;

fn raw(text: &str) -> RawJson {
    serde_json::from_str(text).unwrap()
}

#[test]
fn integers_compare_exactly() {
    use Number::Int;
    assert_eq!(compare(Int(3), Int(4)), Some(Less));
    assert_eq!(compare(Int(4), Int(4)), Some(Equal));
    assert_eq!(compare(Int(5), Int(4)), Some(Greater));
    // Past 2^53, one apart: a float could not tell them.
    assert_eq!(compare(Int(BIG + 1), Int(BIG)), Some(Greater));
    assert_eq!(compare(Int(-BIG - 1), Int(-BIG)), Some(Less));
}

#[test]
fn floats_compare_where_they_are_exact() {
    use Number::{Float, Int};
    assert_eq!(compare(Float(0.5), Float(0.5)), Some(Equal));
    assert_eq!(compare(Float(0.5), Float(0.75)), Some(Less));
    assert_eq!(compare(Float(-0.5), Float(-0.75)), Some(Greater));
    assert_eq!(compare(Float(2.0), Int(2)), Some(Equal));
    assert_eq!(compare(Float(2.5), Int(2)), Some(Greater));
    assert_eq!(compare(Float(-2.5), Int(-2)), Some(Less));
    assert_eq!(compare(Int(2), Float(2.0)), Some(Equal));
    assert_eq!(compare(Int(2), Float(2.5)), Some(Less));
    assert_eq!(compare(Int(-2), Float(-2.5)), Some(Greater));
    // Just below 2^53 a float is still an exact integer.
    assert_eq!(compare(Float(EXACT - 1.0), Int(BIG - 1)), Some(Equal));
    assert_eq!(compare(Float(-(EXACT - 1.0)), Int(0)), Some(Less));
    assert_eq!(compare(Int(BIG - 1), Float(EXACT - 1.0)), Some(Equal));
}

#[test]
fn no_answer_where_the_number_may_not_be_the_one_written() {
    use Number::{Float, Int};
    // NaN, and a float at or past 2^53 (it may stand for a longer integer).
    assert_eq!(compare(Float(f64::NAN), Int(0)), None);
    assert_eq!(compare(Float(f64::NAN), Float(0.0)), None);
    assert_eq!(compare(Float(EXACT), Int(0)), None);
    assert_eq!(compare(Float(-EXACT), Float(0.0)), None);
    assert_eq!(compare(Float(1e300), Float(1.0)), None);
    // A float against an integer limit no float holds exactly.
    assert_eq!(compare(Float(1.0), Int(BIG)), None);
    assert_eq!(compare(Float(1.0), Int(-BIG)), None);
    // An integer past 2^53 against a float limit: every float that large is integral.
    assert_eq!(compare(Int(BIG + 1), Float(EXACT)), Some(Greater));
    assert_eq!(compare(Int(BIG), Float(EXACT)), Some(Equal));
    assert_eq!(compare(Int(-BIG - 1), Float(-EXACT)), Some(Less));
    assert_eq!(compare(Int(BIG), Float(1.5)), Some(Greater));
    assert_eq!(compare(Int(BIG), Float(-1.5)), Some(Greater));
    assert_eq!(compare(Int(BIG), Float(1e37)), Some(Less));
    // ... but not past what an i128 holds, nor infinity or NaN.
    assert_eq!(compare(Int(BIG), Float(1e38)), None);
    assert_eq!(compare(Int(BIG), Float(-1e38)), None);
    assert_eq!(compare(Int(BIG), Float(f64::INFINITY)), None);
    assert_eq!(compare(Int(BIG), Float(f64::NAN)), None);
}

#[test]
fn bounds_accept_the_orderings_given() {
    use Number::{Float, Int};
    let min = [Greater, Equal];
    assert!(bound(Int(3), Int(3), &min));
    assert!(bound(Int(4), Int(3), &min));
    assert!(!bound(Int(2), Int(3), &min));
    assert!(!bound(Int(3), Int(3), &[Greater]));
    assert!(bound(Float(2.5), Float(2.5), &[Less, Equal]));
    assert!(!bound(Float(2.5), Float(2.5), &[Less]));
    // No exact answer: no pass.
    assert!(!bound(Float(EXACT), Int(0), &[Less, Equal, Greater]));
    assert!(!bound(Float(f64::NAN), Int(0), &[Less, Equal, Greater]));
}

#[test]
fn equality_is_json_numbers() {
    use Number::{Float, Int};
    assert!(equal(Int(1), Float(1.0)));
    assert!(equal(Float(1.0), Int(1)));
    assert!(equal(Float(2.5), Float(2.5)));
    assert!(!equal(Int(1), Int(2)));
    assert!(!equal(Float(1.5), Int(1)));
    assert!(!equal(Int(1), Float(1.5)));
    assert!(!equal(Float(EXACT), Int(BIG)));
    assert!(!equal(Float(f64::NAN), Float(f64::NAN)));
}

#[test]
fn whole_multiples_only() {
    use Number::{Float, Int};
    assert!(multiple_of(Int(0), 3));
    assert!(multiple_of(Int(9), 3));
    assert!(multiple_of(Int(-9), 3));
    assert!(!multiple_of(Int(10), 3));
    assert!(!multiple_of(Int(-10), 3));
    assert!(multiple_of(Int(BIG + 2), 2));
    assert!(!multiple_of(Int(BIG + 1), 2));
    assert!(multiple_of(Float(9.0), 3));
    assert!(multiple_of(Float(-9.0), 3));
    assert!(!multiple_of(Float(10.0), 3));
    assert!(!multiple_of(Float(7.5), 3));
    assert!(!multiple_of(Float(1.5), 1));
    assert!(multiple_of(Float(EXACT - 2.0), 2));
    // Past 2^53 a float may be another integer; NaN is none; 0 divides nothing.
    assert!(!multiple_of(Float(EXACT), 2));
    assert!(!multiple_of(Float(-EXACT), 2));
    assert!(!multiple_of(Float(f64::NAN), 1));
    assert!(!multiple_of(Int(0), 0));
    assert!(!multiple_of(Float(0.0), 0));
}

#[test]
fn lengths_are_chars() {
    assert_eq!(chars(""), 0);
    assert_eq!(chars("abc"), 3);
    assert_eq!(chars("é"), 1);
    assert_eq!(chars("é😀x"), 3);
    assert_eq!(chars("e\u{301}"), 2);
}

#[test]
fn unique_items_pairwise_up_to_its_limit() {
    assert!(unique::<u8>(&[]));
    assert!(unique(&[1]));
    assert!(unique(&[1, 2, 3]));
    assert!(!unique(&[1, 2, 1]));
    assert!(!unique(&[1, 2, 3, 3]));
    assert!(!unique(&["a", "a"]));
    let distinct: Vec<u32> = (0..64).collect();
    assert!(unique(&distinct));
    // Past 64 items the validator decides.
    let more: Vec<u32> = (0..65).collect();
    assert!(!unique(&more));
}

#[test]
fn patterns_match_anywhere_and_a_refused_one_matches_nothing() {
    static A: LazyLock<Option<regex::Regex>> = LazyLock::new(|| pattern("^a"));
    static BROKEN: LazyLock<Option<regex::Regex>> = LazyLock::new(|| pattern("("));
    static ANYWHERE: LazyLock<Option<regex::Regex>> = LazyLock::new(|| pattern("b"));
    assert!(matches(&A, "ab"));
    assert!(!matches(&A, "ba"));
    assert!(matches(&ANYWHERE, "abc"));
    assert!(!matches(&ANYWHERE, "ac"));
    assert!(BROKEN.is_none());
    assert!(!matches(&BROKEN, "("));
}

#[test]
fn untyped_values_by_their_text() {
    use Number::{Float, Int};
    // Types, by the first byte after blanks.
    for (text, types, expected) in [
        (r#"{"a": 1}"#, &["object"][..], true),
        ("[1]", &["array"], true),
        (r#""s""#, &["string"], true),
        ("true", &["boolean"], true),
        ("false", &["boolean"], true),
        ("null", &["null"], true),
        ("null", &["string"], false),
        ("1", &["integer"], true),
        ("1.0", &["integer"], true),
        ("1.5", &["integer"], false),
        ("1.5", &["number"], true),
        ("-3", &["number"], true),
        ("1", &["string"], false),
        ("[1]", &["object"], false),
        ("{}", &["array"], false),
        (r#""1""#, &["integer", "number"], false),
        // A number no f64 holds: no answer here, the validator decides.
        ("1e400", &["number"], false),
    ] {
        assert_eq!(raw_type(&raw(text), types), expected, "{text} {types:?}");
    }
    assert!(matches!(raw_number(&raw("7")), Some(Int(7))));
    assert!(matches!(raw_number(&raw("-7")), Some(Int(-7))));
    assert!(
        matches!(raw_number(&raw("18446744073709551615")), Some(Int(n)) if n == i128::from(u64::MAX))
    );
    assert!(matches!(raw_number(&raw("2.5")), Some(Float(f)) if f == 2.5));
    assert!(matches!(raw_number(&raw("1e2")), Some(Float(f)) if f == 100.0));
    assert!(raw_number(&raw(r#""7""#)).is_none());
    assert!(raw_number(&raw("[7]")).is_none());
    assert!(raw_number(&raw("true")).is_none());
    assert_eq!(raw_str(&raw(r#""a\"b""#)).as_deref(), Some("a\"b"));
    assert_eq!(raw_str(&raw(r#""""#)).as_deref(), Some(""));
    assert_eq!(raw_str(&raw("[\"a\"]")), None);
    assert_eq!(raw_str(&raw("null")), None);
    assert_eq!(raw_len(&raw("[]")).unwrap(), Some(0));
    assert_eq!(
        raw_len(&raw("[[1, 2], {\"a\": [3]}, \"x\"]")).unwrap(),
        Some(3)
    );
    assert_eq!(raw_len(&raw("\"[1]\"")).unwrap(), None);
    assert_eq!(raw_len(&raw("{\"a\": [1]}")).unwrap(), None);
}
