import WinkCore

/// What an event name may be, and how many the `hello` line can announce (README "Configuration").
///
/// Names travel in places with their own syntax: `winkctl events --events a,b` and input maps split on
/// `,` (sequences) and `+` (chords), and every name is listed in the `hello` line, which like every line is
/// at most 8 KiB (SPEC.md "Event lines"). So a name is 1 to 64 ASCII characters: a letter first, then
/// letters, digits, `_`, `-` or `.`; and the names together must leave `hello` within the line limit. A
/// value type with no I/O: the configuration checks a table with it before the daemon serves it.
public enum EventNameRules {
    /// The longest name, in characters.
    public static let maximumLength = 64

    /// The characters allowed after the first letter, besides letters and digits.
    public static let punctuation: Set<Character> = ["_", "-", "."]

    /// Why `name` cannot be an event name, or nil when it can; the text says what the rule is.
    public static func problem(with name: String) -> String? {
        let rule = "expected 1 to \(maximumLength) ASCII letters, digits, '_', '-' or '.', starting with a letter"
        guard let first = name.first else { return "the name is empty; \(rule)" }
        guard name.count <= maximumLength else { return "the name has \(name.count) characters; \(rule)" }
        guard first.isASCII && first.isLetter else { return "the name starts with '\(first)'; \(rule)" }
        if let bad = name.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber || punctuation.contains($0))) }) {
            let shown = bad.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .control || $0 == " " })
                ? bad.unicodeScalars.map { scalar in
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                }.joined(separator: " ")
                : "'\(bad)'"
            return "the name holds \(shown); \(rule)"
        }
        return nil
    }

    /// The bytes of the `hello` line announcing `names` (without its newline), as the server writes it.
    public static func helloLength(_ names: [String]) -> Int {
        (try? LineEncoder().string(HelloLine(events: names)).utf8.count) ?? Int.max
    }

    /// The longest `hello` line, in bytes without the newline: SPEC.md's 8 KiB line limit.
    public static var helloLimit: Int { LineSplitter.protocolLimit }

    /// Why `hello` cannot announce `names` (its line would be over 8 KiB), or nil when it can.
    public static func helloProblem(_ names: [String]) -> String? {
        let length = helloLength(names)
        guard length > helloLimit else { return nil }
        let characters = names.reduce(0) { $0 + $1.utf8.count }
        // Each name costs its characters, two quotes and a comma (one comma fewer than names).
        let budget = helloLimit - helloLength([]) - 3 * names.count + 1
        let advice = budget >= names.count
            ? "\(names.count) names may take \(budget) characters together, these take \(characters)"
            : "even one-character names fit at most \((helloLimit - helloLength([]) + 1) / 4) events"
        return "the hello line announcing these \(names.count) events would be \(length) bytes, over the "
            + "\(helloLimit)-byte (8 KiB) line limit (\(advice)); use fewer rows or shorter names"
    }
}
