import Foundation
import Testing
import WinkCore

@testable import InputClient

struct InputMapTests {
    @Test func parsesTheSpecExample() throws {
        let map = try InputMap.parse(
            Data(
                """
                {"mappings": [
                  {"event": "winkLeft", "action": {"key": "KEY_LEFT"}, "mode": "press"},
                  {"event": "smile", "action": {"key": "KEY_ENTER"}, "mode": "press", "minHold": 0.8},
                  {"event": "mouthOpen", "action": {"button": "BTN_LEFT"}, "mode": "hold"}
                ]}
                """.utf8))
        #expect(map.safeStart == 1.0)
        #expect(
            map.mappings == [
                Mapping(trigger: .event("winkLeft"), action: .key(InputKey(name: "KEY_LEFT", code: 105)), mode: .press),
                Mapping(
                    trigger: .event("smile"), action: .key(InputKey(name: "KEY_ENTER", code: 28)), mode: .press,
                    minHold: 0.8),
                Mapping(
                    trigger: .event("mouthOpen"), action: .button(InputKey(name: "BTN_LEFT", code: 0x110)),
                    mode: .hold),
            ])
        #expect(map.eventNames == ["faceFound", "faceLost", "mouthOpen", "smile", "winkLeft"])
        #expect(map.keys.map(\.name) == ["KEY_ENTER", "KEY_LEFT", "BTN_LEFT"])
    }

    @Test func parsesChordsSequencesAndDefaults() throws {
        let map = try InputMap.parse(
            Data(
                """
                {"safeStart": 0.25, "mappings": [
                  {"event": "winkLeft+smile", "action": {"command": ["notify-send", "hi"]}},
                  {"event": "blink,blink", "within": 0.5, "action": {"pause": true}},
                  {"event": "blink,blink", "action": {"key": "KEY_SPACE"}, "mode": "toggle", "cooldown": 2},
                  {"event": "mouthOpen", "action": {"key": "KEY_DOWN"}, "mode": "repeat"},
                  {"event": "eyesClosed", "action": {"key": "KEY_UP"}, "mode": "repeat", "interval": 100}
                ]}
                """.utf8))
        #expect(map.safeStart == 0.25)
        #expect(map.mappings[0].trigger == .chord(["winkLeft", "smile"]))
        #expect(map.mappings[0].action == .command(["notify-send", "hi"]))
        #expect(map.mappings[0].mode == .press)
        #expect(map.mappings[1].trigger == .sequence(["blink", "blink"], within: 0.5))
        #expect(map.mappings[1].action == .pause)
        #expect(map.mappings[2].trigger == .sequence(["blink", "blink"], within: 0.6))
        #expect(map.mappings[2].cooldown == 2)
        #expect(map.mappings[3].mode == .repeat(interval: 0.25))
        #expect(map.mappings[4].mode == .repeat(interval: 0.1))
    }

    @Test func reportsEveryProblemNamingTheKey() {
        let json = """
            {"mappings": [
              {"event": "winkLeft", "action": {"key": "KEY_FOO"}},
              {"event": "smile", "action": {"button": "KEY_ENTER"}, "mode": "hopp", "minHold": -1},
              {"event": "blink", "action": {"key": "KEY_A"}, "within": 0.4, "interval": 50},
              {"event": "blink", "action": {"pause": true}, "mode": "hold", "extra": 1},
              {"action": {"kee": "KEY_A"}}
            ], "safestart": 2}
            """
        #expect(
            throws: InputError(
                .invalidMap(problems: [
                    "safestart: unknown key (expected \"mappings\", \"safeStart\")",
                    "mappings[0].action.key: unknown key name 'KEY_FOO' (names as in linux/input-event-codes.h, e.g. "
                    + "KEY_ENTER)",
                    "mappings[1].action.button: 'KEY_ENTER' is not a button (BTN_...); use {\"key\": \"KEY_ENTER\"}",
                    "mappings[1].minHold: must be 0 or more seconds, got -1",
                    "mappings[1].mode: unknown mode 'hopp' (expected press, hold, toggle, repeat)",
                    "mappings[2].within: only for sequences ('blink,blink')",
                    "mappings[2].interval: only for mode \"repeat\"",
                    "mappings[3].extra: unknown key",
                    "mappings[3].mode: a pause action only takes mode \"press\"",
                    "mappings[4].event: missing",
                    "mappings[4].action.kee: unknown action (expected key, button, command, pause)",
                ]), subject: "m.json", reason: "safestart: unknown key (expected \"mappings\", \"safeStart\")")
        ) {
            try InputMap.parse(Data(json.utf8), path: "m.json")
        }
    }

    /// Newcomer findings: a `repeat` interval of 1e-20 ms was taken (its taps then never advanced time: an
    /// endless flood no signal stopped); names winkd serves ("brow-raise", "brow.raise") were refused; face
    /// events in chords or with a minHold can never fire and are said so.
    @Test func repeatIntervalsNamesAndFaceMoments() throws {
        for (interval, accepted) in [(1e-20, false), (0.01, false), (9.99, false), (10, true), (250, true)] {
            let json = #"{"mappings": [{"event": "smile", "action": {"key": "KEY_A"}, "mode": "repeat", "interval": "#
                + "\(interval)}]}"
            do {
                let map = try InputMap.parse(Data(json.utf8), path: "m.json")
                #expect(accepted && map.mappings[0].mode == .repeat(interval: interval / 1000), "\(interval)")
            } catch let error as InputError {
                #expect(!accepted, "\(interval): \(error)")
                #expect(error.description.contains("interval: expected at least 10 milliseconds"), "\(error)")
            }
        }
        // A mapping's second "action" was dropped without a word (JSON keeps one of them).
        #expect(
            throws: InputError(
                .invalidMap(problems: [
                    "mappings[0].action: given twice in one object; JSON keeps only one of them"
                ]), subject: "m.json",
                reason: "mappings[0].action: given twice in one object; JSON keeps only one of them")
        ) {
            try InputMap.parse(
                Data(#"{"mappings": [{"event": "smile", "action": {"key": "KEY_A"}, "action": {"key": "KEY_B"}}]}"#
                    .utf8),
                path: "m.json")
        }
        let names = try InputMap.parse(
            Data(
                (#"{"mappings": [{"event": "brow-raise", "action": {"key": "KEY_A"}},"#
                    + #"{"event": "brow.raise+smile", "action": {"key": "KEY_B"}}]}"#).utf8))
        #expect(names.mappings.map(\.trigger) == [.event("brow-raise"), .chord(["brow.raise", "smile"])])
        #expect(throws: InputError.self) {
            try InputMap.parse(Data(#"{"mappings": [{"event": "-x", "action": {"key": "KEY_A"}}]}"#.utf8))
        }
        #expect(
            throws: InputError(
                .invalidMap(problems: [
                    "mappings[0].event: 'faceLost' is a moment, not a gesture: map it alone, not in 'faceLost+smile'",
                    "mappings[1].minHold: 'faceFound' has no duration (it is a moment); leave minHold out",
                ]), subject: "m.json",
                reason: "mappings[0].event: 'faceLost' is a moment, not a gesture: map it alone, not in 'faceLost+smile'")
        ) {
            try InputMap.parse(
                Data(
                    (#"{"mappings": [{"event": "faceLost+smile", "action": {"key": "KEY_A"}},"#
                        + #"{"event": "faceFound", "action": {"key": "KEY_B"}, "minHold": 1}]}"#).utf8),
                path: "m.json")
        }
    }

    /// A newcomer's findings: KEY_RESERVED and KEY_MAX were taken as keys; a dry run printed a command's
    /// argument holding a newline as two lines, the second reading like an action.
    @Test func noKeyCodesAndOneLinePerDryRunAction() throws {
        for name in ["KEY_RESERVED", "KEY_MAX", "KEY_CNT"] {
            let json = #"{"mappings": [{"event": "blink", "action": {"key": ""# + name + #""}}]}"#
            #expect(throws: InputError.self, "\(name)") { try InputMap.parse(Data(json.utf8)) }
        }
        #expect(try InputMap.parse(Data(#"{"mappings": [{"event": "blink", "action": {"key": "KEY_ESC"}}]}"#.utf8))
            .keys.map(\.code) == [1])
        var lines: [String] = []
        let printer = PrintingInjector { lines.append($0); return nil }
        printer.run(["echo", "hi\npress KEY_ENTER"])
        printer.run(["notify-send", "two words", "a\"quote\\", "plain"])
        #expect(lines == [#"run echo $'hi\npress KEY_ENTER'"#, #"run notify-send 'two words' 'a"quote\' plain"#])
    }

    /// A helper's finding: a dry run printed `"$(touch PWNED)"` in double quotes, which a shell pasting the line
    /// expands (winkd itself runs it without a shell, literally). Each argument is quoted as a shell reads it
    /// back: checked by bash reading the printed line.
    @Test func aDryRunQuotesCommandsAsAShellReadsThemBack() throws {
        let arguments = [
            "sh", "-c", "echo \"$1\"", "$(touch PWNED) `id` it's", "tab\there", "bell\u{7}", "", "a/b.c:d=e",
            "nel\u{85}", "rtl\u{202E}x", "zw\u{200B}", "é",
        ]
        var lines: [String] = []
        let printer = PrintingInjector { lines.append($0); return nil }
        printer.run(arguments)
        #expect(lines.count == 1)
        #expect(
            lines.first == #"run sh -c 'echo "$1"' '$(touch PWNED) `id` it'\''s' $'tab\there' $'bell\x07' '' "#
                + #"a/b.c:d=e $'nel\u0085' $'rtl\u202ex' $'zw\u200b' 'é'"#, "\(lines)")
        // bash reads the line back into the same arguments (printf prints each between < and >).
        let line = try #require(lines.first).dropFirst("run ".count)
        let bash = Process()
        bash.executableURL = URL(fileURLWithPath: "/bin/bash")
        bash.arguments = ["-c", "printf '<%s>' " + line]
        bash.environment = ["LC_ALL": "C.UTF-8"]  // $'\u....' needs a UTF-8 locale
        let out = Pipe()
        bash.standardOutput = out
        try bash.run()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        bash.waitUntilExit()
        #expect(printed == arguments.map { "<\($0)>" }.joined())
    }

    @Test func invalidMapExits78WithOneLinePerProblem() {
        do {
            _ = try InputMap.parse(
                Data(#"{"mappings": [{"event": "a+b,c", "action": {"key": "KEY_NOPE"}}]}"#.utf8),
                path: "x.json")
            Issue.record("expected an error")
        } catch let error as InputError {
            #expect(error.exitCode == .configuration)
            #expect(
                error.description.split(separator: "\n") == [
                    "x.json: mappings[0].event: 'a+b,c' mixes a chord ('+') and a sequence (','); use one",
                    "x.json: mappings[0].action.key: unknown key name 'KEY_NOPE' (names as in "
                    + "linux/input-event-codes.h, e.g. KEY_ENTER)",
                ])
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func notJSONAndMissingFiles() throws {
        let where_ = "not valid JSON (Invalid value around character 1.)"
        #expect(throws: InputError(.invalidMap(problems: [where_]), subject: "m", reason: where_)) {
            try InputMap.parse(Data("{mappings".utf8), path: "m")
        }
        let missing = "/nonexistent/winkd/input.json"
        do {
            _ = try InputMap.load(path: missing)
            Issue.record("expected an error")
        } catch let error as InputError {
            #expect(error.exitCode == .noInput)
            #expect(error.description == "\(missing): no such input map")
        }
    }

    @Test func keyNamesResolveThroughLibevdev() {
        #expect(InputKey(named: "KEY_LEFT")?.code == 105)
        #expect(InputKey(named: "KEY_ENTER")?.code == 28)
        #expect(InputKey(named: "BTN_LEFT")?.code == 0x110)
        #expect(InputKey(named: "KEY_FOO") == nil)
    }
}
