//! How the event decoder allocates: what the event owns and nothing else (a
//! line's members are kept on the stack, its strings read straight from
//! the line), and `write_line` allocates nothing.

use serve_command::v2::Event;

#[path = "support/counting.rs"]
mod counting;

#[track_caller]
fn assert_decode_allocates(line: &str, want: usize) {
    let measured = counting::allocations(|| Event::from_slice(line.as_bytes()));
    assert!(measured.out.is_ok(), "{line}: {:?}", measured.out);
    assert_eq!(measured.count, want, "allocations decoding {line}");
}

#[test]
fn decoding_allocates_what_the_event_owns() {
    // (line, allocations)
    let cases = [
        // A unit event owns nothing.
        (r#"{"event":"goal_unblocked"}"#, 0),
        (r#"{"event":"agent_step","step":3}"#, 0),
        // Its text, once, however the line spells it.
        (r#"{"event":"assistant_delta","content":"Hel"}"#, 1),
        (
            r#"{"event":"assistant_delta","content":"caf\u00e9 \"q\"\n"}"#,
            1,
        ),
        (r#"{ "content" : "Hel" , "event" : "assistant_delta" }"#, 1),
        // Other keys with plain values cost nothing.
        (
            r#"{"event":"assistant_delta","content":"Hel","x":1,"y":"z","n":1e400}"#,
            1,
        ),
        // A nested value is built whether the event reads it or not (the
        // event is known only once its name is read, which may come last):
        // the builder's three stacks, the object and the array, then the
        // text.
        (
            r#"{"event":"assistant_delta","content":"Hel","x":[1,{"y":"z"}]}"#,
            3 + 2 + 1,
        ),
        // Four strings; the absent brief is None.
        (
            r#"{"event":"tool_result","tool_call_id":"c1","tool_name":"shell","is_error":false,"content":"ok","brief":null}"#,
            3,
        ),
    ];
    for (line, want) in cases {
        assert_decode_allocates(line, want);
    }
}

#[test]
fn everything_a_decode_allocates_is_freed_with_the_event() {
    // Members on the stack and in the spill, nested values read and not,
    // escaped strings: each allocation is freed once the event is dropped.
    let mut many = String::from(r#"{"event":"assistant_delta","content":"a\nb""#);
    for i in 0..12 {
        many += &format!(r#","k{i}":[{i},{{"y":"z\t"}}]"#);
    }
    many.push('}');
    let lines = [
        many.as_str(),
        r#"{"event":"assistant_delta","content":"Hel","x":[1,{"y":"z"}]}"#,
        r#"{"event":"jobs_snapshot","request_id":"r","jobs":[]}"#,
        r#"{"event":"agent_step","step":"not a number","n":[[[]]]}"#,
    ];
    for line in lines {
        let measured = counting::allocations(|| drop(Event::from_slice(line.as_bytes())));
        assert!(measured.count > 0, "{line}");
        assert_eq!(measured.freed, measured.count, "{line}");
    }
}

#[test]
fn a_line_of_many_members_spills_to_one_vector() {
    // Eight members stay on the stack; the ninth on goes to one vector.
    let mut line = String::from(r#"{"event":"goal_unblocked""#);
    for i in 0..7 {
        line += &format!(r#","k{i}":{i}"#);
    }
    line.push('}');
    assert_decode_allocates(&line, 0);
    let line = line.replace(r#""k6":6"#, r#""k6":6,"k7":7"#);
    assert_decode_allocates(&line, 1);
}

#[test]
fn writing_a_line_allocates_nothing() {
    let event = Event::tool_result("c1", "shell", "a\n\"b\"", None);
    let mut out = Vec::with_capacity(256);
    let measured = counting::allocations(|| event.write_line(&mut out));
    assert!(measured.out.is_ok());
    assert_eq!(measured.count, 0);
    assert_eq!(
        out,
        b"{\"event\":\"tool_result\",\"tool_call_id\":\"c1\",\"tool_name\":\"shell\",\"is_error\":false,\"content\":\"a\\n\\\"b\\\"\",\"brief\":null}\n"
    );
}
