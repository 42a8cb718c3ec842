import Foundation
import Testing
import WinkCore

/// Keys given twice in one JSON object: Foundation keeps one of the values without a word.
struct JSONDuplicateKeysTests {
    func find(_ text: String) -> [String] { JSONDuplicateKeys.find(in: Data(text.utf8)) }

    @Test func aRepeatedKeyIsNamedWithItsPlaceAndLines() {
        #expect(find(#"{"a": 1, "b": {"c": 2}}"#) == [])
        #expect(find("{\"quality\": {\"maximumYaw\": 30},\n\"mirrored\": true,\n\"quality\": {}}") == [
            "quality: given twice in one object (lines 1 and 3); JSON keeps only one of them"
        ])
        // Inside an array's element, and inside a nested object: the path says where.
        #expect(find(#"{"analyzers": [{"event": "a"}, {"event": "b", "enter": 0.5, "enter": 0.7}]}"#) == [
            "analyzers[1].enter: given twice in one object; JSON keeps only one of them"
        ])
        #expect(find(#"{"x": {"y": {"z": 1, "z": 2}}}"#).first?.hasPrefix("x.y.z: given twice") == true)
        // A one-line file ends with a line break: still one line (it said "(lines 1 and 1)").
        #expect(find("{\"a\": 1, \"a\": 2}\n") == ["a: given twice in one object; JSON keeps only one of them"])
        // Both on the first line of several: the line is said (only text of one line goes without).
        #expect(find("{\"a\": 1, \"a\": 2,\n\"b\": 3}") == [
            "a: given twice in one object (lines 1 and 1); JSON keeps only one of them"
        ])
        // The same name in two objects is not a repeat; nor is a value equal to a key.
        #expect(find(#"{"a": {"k": 1}, "b": {"k": 1}, "c": "a", "d": ["a", "a"]}"#) == [])
        // Names are compared decoded: "\u0061" is "a". Quotes, braces and escapes inside strings are text.
        #expect(find(#"{"a": 1, "\u0061": 2}"#).count == 1)
        #expect(find(#"{"s": "}\"{ \"s\": ", "t": "\\", "s2": [1, {"q": "]"}]}"#) == [])
        // Top-level arrays, trailing commas and comments (which lenient parsers accept).
        #expect(find("[{\"k\": 1, \"k\": 2,}, // note\n {\"k\": 3} /* { \"k\": 4 } */]").count == 1)
    }

    /// A newcomer's finding: a file with a UTF-8 byte-order mark, or in UTF-16 or UTF-32, which Foundation
    /// parses, was not checked at all (the scan met no "{" and stopped).
    @Test func everyEncodingFoundationReadsIsChecked() throws {
        let text = "{\"quality\": {\"maximumYaw\": 20},\n \"quality\": {\"maximumYaw\": 30}}"
        let said = ["quality: given twice in one object (lines 1 and 2); JSON keeps only one of them"]
        var encodings: [(String, Data)] = [
            ("UTF-8", Data(text.utf8)), ("UTF-8 BOM", Data([0xEF, 0xBB, 0xBF] + text.utf8)),
        ]
        for (name, encoding) in [("UTF-16LE", String.Encoding.utf16LittleEndian), ("UTF-16BE", .utf16BigEndian),
                                 ("UTF-32LE", .utf32LittleEndian), ("UTF-32BE", .utf32BigEndian)] {
            let plain = try #require(text.data(using: encoding))
            encodings.append((name, plain))
            let marked: [UInt8] = switch encoding {
            case .utf16LittleEndian: [0xFF, 0xFE]
            case .utf16BigEndian: [0xFE, 0xFF]
            case .utf32LittleEndian: [0xFF, 0xFE, 0, 0]
            default: [0, 0, 0xFE, 0xFF]
            }
            encodings.append((name + " BOM", Data(marked) + plain))
        }
        for (name, data) in encodings {
            // Foundation reads each of them (so winkd would have used the second "quality").
            #expect((try? JSONSerialization.jsonObject(with: data)) != nil, "\(name): Foundation does not read it")
            #expect(JSONDuplicateKeys.find(in: data) == said, "\(name)")
        }
    }

    /// A newcomer's findings: lines ended by a CR alone were all "line 1"; a key given three times gave two
    /// identical lines; a file repeating a key a million times gave 999,999 lines (in 18 s).
    @Test func repeatsAreCountedOnceAndTheReportStaysShort() {
        #expect(find("{\"a\": 1,\r\"a\": 2,\r\n\"a\": 3}") == [
            "a: given 3 times in one object (lines 1, 2 and 3); JSON keeps only one of them"
        ])
        let many = "{" + (0..<1000).map { "\"k\": \($0)" }.joined(separator: ",\n") + "}"
        #expect(find(many) == [
            "k: given 1000 times in one object (lines 1, 2, 3, 4, 5, 6, 7, 8, ... and 992 more); "
                + "JSON keeps only one of them"
        ])
        let keys = "{" + (0..<30).map { "\"k\($0)\": 1, \"k\($0)\": 2" }.joined(separator: ", ") + "}"
        let report = find(keys)
        #expect(report.count == 21 && report.last == "and 10 more keys given more than once", "\(report.suffix(2))")
        #expect(report.first == "k0: given twice in one object; JSON keeps only one of them")
    }

    @Test func textThatIsNotJSONNeverTraps() {
        for text in ["", "{", "{\"a\"", "{\"a\": ", "{\"a\": [1, {\"b\"", "\"unterminated", "{\"a\" 1, \"a\": 2}",
                     "]]]}}}", "{,,,}", "/* open", String(repeating: "[", count: 100_000),
                     String(repeating: "{\"a\":", count: 100_000)] {
            _ = find(text)
        }
        var state: UInt64 = 12_345
        let alphabet = Array("{}[]\":,\\ab1/*\n ".utf8)
        for _ in 0..<200 {
            var bytes: [UInt8] = []
            for _ in 0..<64 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(alphabet[Int(state >> 33) % alphabet.count])
            }
            _ = JSONDuplicateKeys.find(in: Data(bytes))
        }
    }
}
