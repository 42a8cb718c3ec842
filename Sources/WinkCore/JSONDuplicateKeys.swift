import Foundation

/// Finds keys given twice in one JSON object, which Foundation's parsers accept silently, keeping one of the
/// values: a configuration with two `"quality"` sections, or an analyzer row with two `"enter"`s, lost
/// the other without a word. RFC 8259, section 4: names within an object "SHOULD be unique"; software that
/// reads people's settings should say when they are not.
///
/// Thread-safe (no state).
public enum JSONDuplicateKeys {
    /// One line per key repeated within one object, in the order the repeats appear, e.g.
    /// `quality: given twice in one object (lines 4 and 12); JSON keeps only one of them`, or
    /// `analyzers[2].enter: ...` for a key inside an array's element. Line numbers count from 1; text of one
    /// line (a client's request) has none (`id: given twice in one object; JSON keeps only one of them`).
    ///
    /// `data` should already have parsed as JSON; on text that is not JSON the scan stops where the text stops
    /// making sense and returns what it found before (it never traps). Keys are compared after their escapes
    /// are decoded (`"a"` and `"\u0061"` are the same key).
    ///
    /// The text may be in any encoding Foundation's parsers read (RFC 8259 section 8.1, RFC 4627 section 3):
    /// UTF-8 with or without a byte-order mark, UTF-16 or UTF-32 of either byte order (a byte-order mark or
    /// the zero bytes of its first character tell which); it is scanned as UTF-8.
    public static func find(in data: Data) -> [String] {
        var scanner = Scanner(bytes: utf8(data))
        // One line of text, with or without its final line break (as nearly every file ends).
        let text = scanner.bytes.reversed().drop { $0 == 0x0A || $0 == 0x0D || $0 == 0x20 || $0 == 0x09 }
        scanner.oneLine = !text.contains(0x0A) && !text.contains(0x0D)
        scanner.skipSpace()
        scanner.value(path: "")
        return scanner.found
    }

    /// `data` as UTF-8 bytes, without a byte-order mark.
    static func utf8(_ data: Data) -> [UInt8] {
        let b = [UInt8](data.prefix(4))
        func decoded(_ encoding: String.Encoding, dropping count: Int) -> [UInt8] {
            String(data: data.dropFirst(count), encoding: encoding).map { Array($0.utf8) } ?? []
        }
        switch b.count >= 4 ? (b[0], b[1], b[2], b[3]) : (b.first ?? 1, b.count > 1 ? b[1] : 1, 1, 1) {
        case (0xEF, 0xBB, 0xBF, _): return [UInt8](data.dropFirst(3))
        case (0x00, 0x00, 0xFE, 0xFF): return decoded(.utf32BigEndian, dropping: 4)
        case (0xFF, 0xFE, 0x00, 0x00): return decoded(.utf32LittleEndian, dropping: 4)
        case (0xFE, 0xFF, _, _): return decoded(.utf16BigEndian, dropping: 2)
        case (0xFF, 0xFE, _, _): return decoded(.utf16LittleEndian, dropping: 2)
        case (0x00, 0x00, 0x00, _): return decoded(.utf32BigEndian, dropping: 0)
        case (_, 0x00, 0x00, 0x00): return decoded(.utf32LittleEndian, dropping: 0)
        case (0x00, _, _, _): return decoded(.utf16BigEndian, dropping: 0)
        case (_, 0x00, _, _): return decoded(.utf16LittleEndian, dropping: 0)
        default: return [UInt8](data)
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var at = 0
        var line = 1
        /// The text has no line break: repeats are not given line numbers (all would be 1).
        var oneLine = false
        var found: [String] = []
        /// Keys given more than once so far (reported or only counted).
        var reports = 0
        /// At most this many keys are reported a line each; one more line counts the others.
        static let maximumReports = 20
        /// Nesting deeper than this is not followed (Foundation's parsers refuse deeper documents too).
        var depth = 0
        static let maximumDepth = 512

        init(bytes: [UInt8]) { self.bytes = bytes }

        var current: UInt8? { at < bytes.count ? bytes[at] : nil }

        /// Steps over one byte, counting lines ended by LF, CR LF or a CR alone.
        mutating func advance() {
            let c = bytes[at]
            if c == 0x0A || (c == 0x0D && (at + 1 == bytes.count || bytes[at + 1] != 0x0A)) { line += 1 }
            at += 1
        }

        /// Skips white space and, as lenient parsers accept them, `//` and `/* */` comments.
        mutating func skipSpace() {
            while let c = current {
                if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
                    advance()
                } else if c == UInt8(ascii: "/"), at + 1 < bytes.count, bytes[at + 1] == UInt8(ascii: "/") {
                    while let d = current, d != 0x0A { advance() }
                } else if c == UInt8(ascii: "/"), at + 1 < bytes.count, bytes[at + 1] == UInt8(ascii: "*") {
                    advance()
                    advance()
                    while current != nil && !(current == UInt8(ascii: "*") && at + 1 < bytes.count
                                              && bytes[at + 1] == UInt8(ascii: "/")) {
                        advance()
                    }
                    if current != nil {
                        advance()
                        advance()
                    }
                } else {
                    return
                }
            }
        }

        /// Scans one value at `at` (white space skipped before it), whose place is `path`.
        mutating func value(path: String) {
            guard let c = current else { return }
            switch c {
            case UInt8(ascii: "{"): object(path: path)
            case UInt8(ascii: "["): array(path: path)
            case UInt8(ascii: "\""): _ = string()
            default:  // a number or a literal: up to the next delimiter
                let delimiters: [UInt8] = [0x2C, 0x7D, 0x5D, 0x20, 0x09, 0x0A, 0x0D, 0x2F]  // , } ] space tab LF CR /
                while let d = current, !delimiters.contains(d) { advance() }
            }
        }

        mutating func object(path: String) {
            depth += 1
            defer { depth -= 1 }
            advance()  // {
            // Each key's lines, and the keys given more than once in the order their second time came.
            var seen: [String: [Int]] = [:]
            var repeated: [(key: String, place: String)] = []
            defer {
                for (key, place) in repeated { report(place, lines: seen[key] ?? []) }
            }
            while true {
                skipSpace()
                guard let c = current else { return }
                if c == UInt8(ascii: "}") {
                    advance()
                    return
                }
                if c == UInt8(ascii: ",") {
                    advance()
                    continue
                }
                guard c == UInt8(ascii: "\""), depth <= Self.maximumDepth else { return }
                let keyLine = line
                guard let key = string() else { return }
                let place = path.isEmpty ? key : "\(path).\(key)"
                seen[key, default: []].append(keyLine)
                if seen[key]?.count == 2 { repeated.append((key, place)) }
                skipSpace()
                guard current == UInt8(ascii: ":") else { return }
                advance()
                skipSpace()
                value(path: place)
            }
        }

        /// One line for a key given `lines.count` times; past `maximumReports` lines, one that counts the rest.
        mutating func report(_ place: String, lines: [Int]) {
            reports += 1
            guard reports <= Self.maximumReports else {
                if found.count == Self.maximumReports { found.append("") }
                found[Self.maximumReports] = "and \(reports - Self.maximumReports) more keys given more than once"
                return
            }
            let shown = lines.prefix(8).map(String.init)
            let more = lines.count > 8 ? " and \(lines.count - 8) more" : ""
            let listed = lines.count == 2 && more.isEmpty
                ? "\(shown[0]) and \(shown[1])"
                : shown.dropLast(more.isEmpty ? 1 : 0).joined(separator: ", ")
                    + (more.isEmpty ? " and \(shown.last ?? "")" : ", ...\(more)")
            let times = lines.count == 2 ? "twice" : "\(lines.count) times"
            // Text of one line (a client's request) has nothing to point at: "(lines 1 and 1)" said nothing.
            let whereGiven = oneLine ? "" : " (lines \(listed))"
            found.append("\(place): given \(times) in one object\(whereGiven); JSON keeps only one of them")
        }

        mutating func array(path: String) {
            depth += 1
            defer { depth -= 1 }
            advance()  // [
            var index = 0
            while true {
                skipSpace()
                guard let c = current, depth <= Self.maximumDepth else { return }
                if c == UInt8(ascii: "]") {
                    advance()
                    return
                }
                if c == UInt8(ascii: ",") {
                    advance()
                    index += 1
                    continue
                }
                let start = at
                value(path: "\(path)[\(index)]")
                if at == start { return }  // nothing a value can start with
            }
        }

        /// Scans a string literal at `at` and returns its decoded text (nil: unterminated or undecodable).
        mutating func string() -> String? {
            let start = at
            advance()  // "
            var escaped = false
            while let c = current {
                if escaped {
                    escaped = false
                } else if c == UInt8(ascii: "\\") {
                    escaped = true
                } else if c == UInt8(ascii: "\"") {
                    advance()
                    let literal = bytes[start..<at]
                    if !literal.contains(UInt8(ascii: "\\")) {
                        return String(decoding: literal.dropFirst().dropLast(), as: UTF8.self)
                    }
                    return (try? JSONSerialization.jsonObject(with: Data(literal), options: .fragmentsAllowed))
                        as? String
                }
                advance()
            }
            return nil
        }
    }
}

/// A one-line description of a JSONSerialization error: its debug description ("Unexpected end of file during
/// string parse (expected low-surrogate code point but did not find one).", "Too many nested arrays or
/// dictionaries around line 1, column 513."), new lines made spaces; the error's own text when it has none.
public func describeJSONError(_ error: Error) -> String {
    let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
    return text.replacingOccurrences(of: "\n", with: " ")
}

/// "not valid JSON (where and what)" for a JSONSerialization error: the words every file reader uses.
public func notValidJSON(_ error: Error) -> String { "not valid JSON (\(describeJSONError(error)))" }

/// "not valid JSON (where and what)" when JSONSerialization cannot read `data`, else nil. For the files read
/// with JSONDecoder, which says only "The given data was not valid JSON." (no place, no reason): called once
/// it has failed, to say why.
public func invalidJSONReason(_ data: Data) -> String? {
    do {
        _ = try JSONSerialization.jsonObject(with: data)
        return nil
    } catch {
        return notValidJSON(error)
    }
}

/// What a person would call the JSON value a `DecodingError` expected of `type`: "a number", "a whole
/// number", "a string", "true or false", "a list" (an array), "an object" (a dictionary or struct). For the
/// "KEY: expected ..." lines of every file reader (configuration, profile, layout), instead of JSONDecoder's
/// "Expected to decode Dictionary<String, Any> but found an array instead."
public func jsonTypeName(_ type: Any.Type) -> String {
    switch type {
    case is Bool.Type: return "true or false"
    case is Float.Type, is Double.Type: return "a number"
    case is Int.Type, is Int32.Type, is Int64.Type, is UInt.Type, is UInt32.Type: return "a whole number"
    case is String.Type: return "a string"
    default: return String(describing: type).hasPrefix("Array") ? "a list" : "an object"
    }
}

/// Decodes a string-valued enum (`"gate": "eyes"`), naming the accepted values when the text is none of them:
/// "'nose' is not one of eyes, mouth, none", with the spelling meant when only its case differs ("'oneshot'
/// is not one of held, oneShot (did you mean 'oneShot'?)"). JSONDecoder's own text was "Cannot initialize
/// Gate from invalid String value nose".
/// - Throws: `DecodingError.dataCorrupted` with that text, at the value's coding path; `typeMismatch` for a
///   value that is not a string.
public func decodeOneOf<T: RawRepresentable & CaseIterable>(_ decoder: Decoder) throws -> T where T.RawValue == String {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    if let value = T(rawValue: text) { return value }
    let names = T.allCases.map(\.rawValue)
    let meant = names.first { $0.lowercased() == text.lowercased() }.map { " (did you mean '\($0)'?)" } ?? ""
    throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "'\(text)' is not one of \(names.joined(separator: ", "))\(meant)")
}
