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
}
