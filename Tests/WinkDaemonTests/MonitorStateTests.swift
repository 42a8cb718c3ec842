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
}
