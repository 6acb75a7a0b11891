import Testing
@testable import SwellJSON

private func parse(_ text: String) throws -> JSONValue {
    try JSONValue.parse(Array(text.utf8))
}

@Test(arguments: [("1e2", 100), ("10.0", 10), ("-0", 0), ("9223372036854775807", Int64.max),
                  ("-9223372036854775808", Int64.min), ("0.5e1", 5), ("1200E-2", 12), ("-12", -12)])
func wholeNumbersGiveTheirExactInt64(text: String, expected: Int64) {
    #expect(JSONNumber(text: text).int64 == expected)
}

@Test(arguments: ["9223372036854775808", "-9223372036854775809", "1.5", "1e-1", "1e20", "12345678901234567890123e-3"])
func numbersThatAreNotWholeInt64GiveNil(text: String) {
    #expect(JSONNumber(text: text).int64 == nil)
}

@Test func doubleIsNilWhenNotFinite() {
    #expect(JSONNumber(text: "1e400").double == nil)
    #expect(JSONNumber(text: "-1e400").double == nil)
    #expect(JSONNumber(text: "10.50").double == 10.5)
    #expect(JSONNumber(text: "1e-400").double == 0)
}

@Test func numbersKeepTheirText() throws {
    #expect(try parse("[10.50, 1E+2, 123456789012345678901234567890]")
        == .array(["10.50", "1E+2", "123456789012345678901234567890"].map { .number(JSONNumber(text: $0)) }))
}

@Test func theLastDuplicateKeyWins() throws {
    let value = try parse(#"{"a":1,"b":2,"a":3}"#)
    guard case .object(let object) = value else {
        Issue.record("not an object")
        return
    }
    #expect(object["a"] == .number(JSONNumber(text: "3")))
    #expect(object["missing"] == nil)
    #expect(object.members.count == 3)
    #expect(value.value(at: ["a"]) == .number(JSONNumber(text: "3")))
}

@Test func valueAtFollowsObjectKeysOnly() throws {
    let value = try parse(#"{"meta":{"next_cursor":"c","list":[{"x":1}]}}"#)
    #expect(value.value(at: ["meta", "next_cursor"]) == .string("c"))
    #expect(value.value(at: ["meta", "list", "x"]) == nil)
    #expect(value.value(at: ["meta", "absent"]) == nil)
    #expect(value.value(at: []) == value)
}

@Test func objectEqualityFollowsMemberOrder() throws {
    #expect(try parse(#"{"a":1,"b":2}"#) != parse(#"{"b":2,"a":1}"#))
    #expect(try parse(#"{"a":1,"b":2}"#) == parse(#" { "a" : 1 , "b" : 2 } "#))
}

@Test func jsonTextRoundTripsAndEscapesControlCharacters() throws {
    let text = #"{"s":"q\"b\\s\/\u0001\n\t\r\b\f\u001f\u007f é 😀 \ud83d\ude00","n":[-1.5e3,0,true,false,null],"o":{},"a":[]}"#
    let value = try parse(text)
    let written = value.jsonText
    #expect(try parse(written) == value)
    #expect(written == #"{"s":"q\"b\\s/\u0001\n\t\r\b\f\u001f"# + "\u{7f} é 😀 😀" + #"","n":[-1.5e3,0,true,false,null],"o":{},"a":[]}"#)
    #expect(JSONValue.string("\u{0}").jsonText == #""\u0000""#)
}

@Test func parseAcceptsAnyCollectionOfBytes() throws {
    #expect(try JSONValue.parse("[true]".utf8) == .array([.bool(true)]))
    #expect(try JSONValue.parse(Array("x [null] ".utf8).dropFirst()) == .array([.null]))
}
