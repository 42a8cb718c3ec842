import Testing

@testable import WinkctlCommands

/// What `winkctl monitor` keeps of the lines it reads.
struct MonitorStateTests {
    /// A newcomer's finding: after a reload the title named the configuration file (the `reload_ok` line's
    /// `source`) in place of the recording and its state, until the next source status.
    @Test func aReloadLineDoesNotTakeTheSourcesPlace() {
        var state = MonitorState(socket: "/run/winkd/events.sock")
        let opened = #"{"type":"status","state":"source_opened","source":"/v/clip.mp4","message":"640x360"}"#
        let took = state.apply(opened, now: 0, nowNanoseconds: 0)
        #expect(took)
        let reload = #"{"type":"status","state":"reload_ok","source":"/c/config.json","message":"reloaded"}"#
        _ = state.apply(reload, now: 1, nowNanoseconds: 1)
        #expect(state.source == "/v/clip.mp4" && state.sourceState == "source_opened")
        #expect(state.otherState == "reload_ok")
        let closed = #"{"type":"status","state":"source_closed","source":"/v/clip.mp4"}"#
        _ = state.apply(closed, now: 2, nowNanoseconds: 2)
        #expect(state.sourceState == "source_closed" && state.otherState == "reload_ok")
    }

    /// A table too large to describe said "waiting for the analyzer table (winkd too old for 'analyzers'?)"
    /// for as long as the monitor ran (a newcomer's finding): it says what winkd said instead.
    @Test func aTableTooLargeToDescribeIsShownAsSuch() {
        var state = MonitorState(socket: "/s")
        let described = #"{"type":"analyzers","version":1,"rows":[{"event":"smile","value":"jawOpen","enter":0.5}]}"#
        #expect(state.apply(described, now: 0, nowNanoseconds: 0) && state.table.map(\.event) == ["smile"])
        let omitted = #"{"type":"analyzers","version":1,"rowCount":115,"omitted":"its analyzers line would be "#
            + #"25010 bytes, over the 8 KiB line limit"}"#
        #expect(state.apply(omitted, now: 1, nowNanoseconds: 1) && state.table.isEmpty)
        let text = MonitorScreen.layout(state, rows: 24, columns: 200, now: 1, paused: false, unicode: true)
            .map(\.text).joined(separator: "\n")
        #expect(text.contains("winkd's analyzer table (115 rows) is too large to show here: its analyzers line "
            + "would be 25010 bytes, over the 8 KiB line limit; events still come"), "\(text)")
        #expect(!text.contains("too old"))
        _ = state.apply(described, now: 2, nowNanoseconds: 2)
        #expect(state.tableOmitted == nil && state.table.count == 1)
    }

    /// At 80 columns (the size the README gives) the title cut off a reload's state, and a long file name hid
    /// the source's state too: the states keep their room, the name gives way.
    @Test func theTitleKeepsTheStatesAt80Columns() {
        var state = MonitorState(socket: "/run/winkd/events.sock")
        let name = "a_rather_long_recording_name_from_the_webcam_session_2024.mp4"
        _ = state.apply(#"{"type":"status","state":"source_opened","source":"/v/\#(name)"}"#, now: 0, nowNanoseconds: 0)
        _ = state.apply(#"{"type":"status","state":"reload_failed","source":"/c/c.json"}"#, now: 1, nowNanoseconds: 1)
        let room = 80 - "q quit  p pause  c clear".count - 1
        let title = MonitorScreen.title(state, room: room)
        #expect(title.count <= room && title.hasSuffix("  source_opened  reload_failed"), "\(title)")
        #expect(title.hasPrefix("winkd monitor  a_rather_") && title.contains("…"), "\(title)")
        // A short name fits whole.
        var short = MonitorState(socket: "/s")
        _ = short.apply(#"{"type":"status","state":"source_opened","source":"/v/clip.mp4"}"#, now: 0, nowNanoseconds: 0)
        #expect(MonitorScreen.title(short, room: room) == "winkd monitor  clip.mp4  source_opened")
    }

    /// A newcomer's findings: a CJK or emoji name (two cells a character) pushed the key help off an 80-column
    /// title, as did a decomposed "é" (two scalars counted as one character but drawn by code point); a tab
    /// or newline in a name broke the line. The title is measured in cells, and the name made drawable.
    @Test func theTitleIsMeasuredInCellsAndItsNameMadeDrawable() {
        let keys = "q quit  p pause  c clear"
        func header(_ name: String, columns: Int = 80, unicode: Bool = true) -> String {
            var state = MonitorState(socket: "/s")
            _ = state.apply(
                #"{"type":"status","state":"source_opened","source":"/v/\#(name)"}"#, now: 0, nowNanoseconds: 0)
            return MonitorScreen.layout(state, rows: 24, columns: columns, now: 0, paused: false, unicode: unicode)
                .first { $0.row == 0 }?.text ?? ""
        }
        for name in [String(repeating: "日本語", count: 14) + ".mp4", String(repeating: "😀", count: 30) + ".mp4",
                     "caf" + String(repeating: "e\u{301}", count: 40) + ".mp4", "a\\tb\\nc.mp4"] {
            for columns in [80, 100, 600] {
                let line = header(name, columns: columns)
                #expect(line.hasSuffix(" " + keys) && MonitorScreen.width(line) == columns, "\(columns): \(line)")
                #expect(!line.contains("\t") && !line.contains("\n"), "\(line)")
            }
        }
        #expect(header("caf" + String(repeating: "e\u{301}", count: 3) + ".mp4").contains("cafééé.mp4"))
        #expect(header("a\\tb.mp4").contains("a?b.mp4"))
        #expect(header("日本.mp4").contains("日本.mp4"))
        // In the C locale: ASCII, one cell each, "~" for the cut.
        let ascii = header("vidéo_" + String(repeating: "x", count: 60) + ".mp4", unicode: false)
        #expect(ascii.allSatisfy(\.isASCII) && ascii.contains("vid?o_xx") && ascii.contains("x~  source_opened"),
                "\(ascii)")
        #expect(MonitorScreen.width("日本") == 4 && MonitorScreen.width("😀") == 2 && MonitorScreen.width("é…") == 2)
    }
}
