import CEvdev
import EventServer
import Foundation
import WinkCore

extension InputMap {
    /// Default `within` of a sequence, seconds.
    public static let defaultWithin = 0.6
    /// Shortest `interval` of `repeat`, milliseconds: 100 taps a second, faster than any key repeat a desktop
    /// uses. 1e-20 was taken, and its taps never advanced the next tap's time: an endless flood that no
    /// signal could stop.
    static let minimumRepeatIntervalMilliseconds = 10.0
    /// Default `interval` of `repeat`, milliseconds.
    public static let defaultRepeatIntervalMilliseconds = 250.0

    /// Reads and validates a map file.
    /// - Throws: `InputError` `.mapUnreadable` (exit 66) when the file cannot be read; `.invalidMap`
    ///   (exit 78) with every problem found, one line each naming the key.
    public static func load(path: String) throws -> InputMap {
        if let reason = nonRegularFileReason(path) { throw InputError(.mapUnreadable, subject: path, reason: reason) }
        if let reason = oversizedSettingsFile(path, kind: "an input map") {
            throw InputError(.invalidMap(problems: [reason]), subject: path, reason: reason)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason =
                FileManager.default.fileExists(atPath: path)
                ? "cannot read the input map" + readFailureNote(path) : "no such input map"
            throw InputError(.mapUnreadable, subject: path, reason: reason)
        }
        return try parse(data, path: path)
    }

    /// Validates a map from JSON bytes; `path` only names the source in errors.
    /// - Throws: `InputError.invalidMap` listing every problem.
    public static func parse(_ data: Data, path: String = "<map>") throws -> InputMap {
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            // JSONDecoder says only "not valid JSON"; JSONSerialization says where and what.
            let problem = invalidJSONReason(data) ?? "not valid JSON"
            throw InputError(.invalidMap(problems: [problem]), subject: path, reason: problem)
        }
        var problems = JSONDuplicateKeys.find(in: data)
        let map = parse(root, problems: &problems)
        guard problems.isEmpty, let map else {
            throw InputError(.invalidMap(problems: problems), subject: path, reason: problems.first ?? "invalid")
        }
        return map
    }

    static func parse(_ root: JSONValue, problems: inout [String]) -> InputMap? {
        guard case .object(let top) = root else {
            problems.append("the map must be a JSON object with \"mappings\", found \(root.kind)")
            return nil
        }
        for key in top.keys.sorted() where !["mappings", "safeStart"].contains(key) {
            problems.append("\(key): unknown key (expected \"mappings\", \"safeStart\")")
        }
        let safeStart = seconds(top["safeStart"], key: "safeStart", default: 1.0, problems: &problems)
        guard let list = top["mappings"] else {
            problems.append("mappings: missing")
            return nil
        }
        guard case .array(let items) = list else {
            problems.append("mappings: expected an array, found \(list.kind)")
            return nil
        }
        if items.isEmpty { problems.append("mappings: empty, nothing to do") }
        var mappings: [Mapping] = []
        for (index, item) in items.enumerated() {
            if let mapping = parseMapping(item, at: "mappings[\(index)]", problems: &problems) {
                mappings.append(mapping)
            }
        }
        return InputMap(mappings: mappings, safeStart: safeStart ?? 1.0)
    }

    static let mappingKeys: Set<String> = ["event", "action", "mode", "minHold", "cooldown", "within", "interval"]

    static func parseMapping(_ value: JSONValue, at where_: String, problems: inout [String]) -> Mapping? {
        guard case .object(let object) = value else {
            problems.append("\(where_): expected an object, found \(value.kind)")
            return nil
        }
        let before = problems.count
        for key in object.keys.sorted() where !mappingKeys.contains(key) {
            problems.append("\(where_).\(key): unknown key")
        }
        let trigger = parseTrigger(object, at: where_, problems: &problems)
        let action = parseAction(object["action"], at: "\(where_).action", problems: &problems)
        let minHold = seconds(object["minHold"], key: "\(where_).minHold", default: 0, problems: &problems)
        let cooldown = seconds(object["cooldown"], key: "\(where_).cooldown", default: 0, problems: &problems)

        var mode: Mode?
        switch object["mode"] {
        case nil, .string("press")?: mode = .press
        case .string("hold")?: mode = .hold
        case .string("toggle")?: mode = .toggle
        case .string("repeat")?:
            let interval =
                number(object["interval"], key: "\(where_).interval", problems: &problems)
                ?? defaultRepeatIntervalMilliseconds
            if !(interval >= minimumRepeatIntervalMilliseconds) {
                problems.append(
                    "\(where_).interval: expected at least \(plainNumber(minimumRepeatIntervalMilliseconds)) "
                        + "milliseconds, got \(plainNumber(interval))")
            }
            mode = .repeat(interval: interval / 1000)
        case .string(let other)?:
            problems.append("\(where_).mode: unknown mode '\(other)' (expected press, hold, toggle, repeat)")
        case let other?:
            problems.append("\(where_).mode: expected a string, found \(other.kind)")
        }
        if object["interval"] != nil, case .string(let m)? = object["mode"], m != "repeat" {
            problems.append("\(where_).interval: only for mode \"repeat\"")
        } else if object["interval"] != nil, object["mode"] == nil {
            problems.append("\(where_).interval: only for mode \"repeat\"")
        }
        if let action, let mode {
            switch action {
            case .command, .pause:
                if mode != .press {
                    problems.append(
                        "\(where_).mode: a \(action == .pause ? "pause" : "command") action only takes mode \"press\"")
                }
            case .key, .button: break
            }
        }
        guard problems.count == before, let trigger, let action, let mode else { return nil }
        return Mapping(trigger: trigger, action: action, mode: mode, minHold: minHold ?? 0, cooldown: cooldown ?? 0)
    }

    static func parseTrigger(_ object: [String: JSONValue], at where_: String, problems: inout [String]) -> Trigger? {
        let key = "\(where_).event"
        guard let value = object["event"] else {
            problems.append("\(key): missing")
            return nil
        }
        guard case .string(let text) = value else {
            problems.append("\(key): expected a string, found \(value.kind)")
            return nil
        }
        let within = seconds(object["within"], key: "\(where_).within", default: defaultWithin, problems: &problems)
        // The daemon's own rule for a row's name (a letter, then letters, digits, '_', '-' or '.'): a row
        // winkd serves as "brow-raise" was refused here.
        let isName: (String) -> Bool = { name in EventNameRules.problem(with: name) == nil }
        let hasComma = text.contains(",")
        let hasPlus = text.contains("+")
        if hasComma && hasPlus {
            problems.append("\(key): '\(text)' mixes a chord ('+') and a sequence (','); use one")
            return nil
        }
        let parts = text.split(separator: hasComma ? "," : "+", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.allSatisfy(isName) else {
            problems.append("\(key): '\(text)' is not an event name, a chord 'a+b' or a sequence 'a,b'")
            return nil
        }
        if !hasComma, object["within"] != nil {
            problems.append("\(where_).within: only for sequences ('blink,blink')")
        }
        if let within, within <= 0 { problems.append("\(where_).within: must be more than 0 seconds") }
        let faceEvents = parts.filter { $0 == EventName.faceFound || $0 == EventName.faceLost }
        if parts.count > 1, let face = faceEvents.first {
            problems.append("\(key): '\(face)' is a moment, not a gesture: map it alone, not in '\(text)'")
            return nil
        }
        if !faceEvents.isEmpty, let hold = object["minHold"], hold != .number(0) {
            problems.append("\(where_).minHold: '\(text)' has no duration (it is a moment); leave minHold out")
        }
        if hasComma { return .sequence(parts, within: within ?? defaultWithin) }
        if hasPlus {
            if Set(parts).count != parts.count { problems.append("\(key): '\(text)' names an event twice in a chord") }
            return .chord(parts)
        }
        return .event(text)
    }

    static func parseAction(_ value: JSONValue?, at key: String, problems: inout [String]) -> Action? {
        guard let value else {
            problems.append("\(key): missing")
            return nil
        }
        guard case .object(let object) = value, object.count == 1, let (kind, argument) = object.first else {
            problems.append(
                "\(key): expected one of {\"key\": NAME}, {\"button\": NAME}, {\"command\": [ARGV]}, {\"pause\": true}")
            return nil
        }
        switch kind {
        case "key", "button":
            guard case .string(let name) = argument else {
                problems.append("\(key).\(kind): expected an input-event name, found \(argument.kind)")
                return nil
            }
            guard let inputKey = InputKey(named: name) else {
                problems.append(
                    "\(key).\(kind): unknown \(kind) name '\(name)' (names as in linux/input-event-codes.h, e.g. "
                        + "\(kind == "key" ? "KEY_ENTER" : "BTN_LEFT"))"
                )
                return nil
            }
            // KEY_RESERVED (0) and the range markers KEY_MAX/KEY_CNT name no key: a device cannot send them.
            guard inputKey.code != 0, inputKey.code < UInt16(KEY_MAX) else {
                problems.append("\(key).\(kind): '\(name)' is not a key a device sends (code \(inputKey.code))")
                return nil
            }
            if kind == "button" {
                guard name.hasPrefix("BTN_") else {
                    problems.append("\(key).button: '\(name)' is not a button (BTN_...); use {\"key\": \"\(name)\"}")
                    return nil
                }
                return .button(inputKey)
            }
            guard name.hasPrefix("KEY_") else {
                problems.append("\(key).key: '\(name)' is not a key (KEY_...); use {\"button\": \"\(name)\"}")
                return nil
            }
            return .key(inputKey)
        case "command":
            guard case .array(let items) = argument, !items.isEmpty else {
                problems.append("\(key).command: expected a non-empty array of strings (program, arguments...)")
                return nil
            }
            var argv: [String] = []
            for item in items {
                guard case .string(let text) = item, !text.contains("\0") else {
                    problems.append("\(key).command: every element must be a string, found \(item.kind)")
                    return nil
                }
                argv.append(text)
            }
            if argv[0].isEmpty {
                problems.append("\(key).command: the program name is empty")
                return nil
            }
            return .command(argv)
        case "pause":
            guard argument == .bool(true) else {
                problems.append("\(key).pause: expected true")
                return nil
            }
            return .pause
        default:
            problems.append("\(key).\(kind): unknown action (expected key, button, command, pause)")
            return nil
        }
    }

    static func number(_ value: JSONValue?, key: String, problems: inout [String]) -> Double? {
        guard let value else { return nil }
        guard let number = value.numberValue, number.isFinite else {
            problems.append("\(key): expected a number, found \(value.kind)")
            return nil
        }
        return number
    }

    static func seconds(_ value: JSONValue?, key: String, default fallback: Double, problems: inout [String]) -> Double?
    {
        guard let value else { return fallback }
        guard let number = number(value, key: key, problems: &problems) else { return nil }
        guard number >= 0 else {
            problems.append("\(key): must be 0 or more seconds, got \(plainNumber(number))")
            return nil
        }
        return number
    }
}
