import Foundation
import Testing
import TestSupport

/// `winkctl input --dry-run` against a real winkd playing the left-wink fixture.
@Suite(.serialized)
struct InputDryRunTests {
    @Test func aLeftWinkPressesLeftArrow() throws {
        let dir = try Binaries.temporaryDirectory()
        let socket = dir.appendingPathComponent("events.sock").path
        let map = dir.appendingPathComponent("map.json")
        try Data("""
            {"safeStart": 0.3, "mappings": [
              {"event": "winkLeft", "action": {"key": "KEY_LEFT"}, "mode": "press"},
              {"event": "winkRight", "action": {"key": "KEY_RIGHT"}, "mode": "press"},
              {"event": "mouthOpen", "action": {"button": "BTN_LEFT"}, "mode": "hold"}
            ]}
            """.utf8).write(to: map)
        let daemon = Process()
        daemon.executableURL = Binaries.directory.appendingPathComponent("winkd")
        daemon.arguments = ["--source", Binaries.fixture("video/single_face_wink_left.mp4"), "--socket", socket]
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        #expect(Wait.forFile(socket), "winkd did not create \(socket)")
        let r = try Binaries.run("winkctl", ["input", "--map", map.path, "--socket", socket, "--dry-run", "--once"])
        daemon.waitUntilExit()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdoutLines == ["press KEY_LEFT", "release KEY_LEFT"], "\(r.stdout)")
    }

    /// A newcomer's finding: a command whose program does not exist was only found out at each gesture. It is
    /// refused at start (78); a dry run, which starts nothing, says so and goes on.
    @Test func aCommandThatCannotStartIsRefusedAtStart() throws {
        let dir = try Binaries.temporaryDirectory()
        let map = dir.appendingPathComponent("map.json")
        try Data((#"{"mappings": [{"event": "blink", "action": {"key": "KEY_B"}},"#
            + #" {"event": "faceLost", "action": {"command": ["no-such-locker", "--now"]}}]}"#).utf8).write(to: map)
        let socket = dir.appendingPathComponent("none.sock").path
        let line = "winkctl: \(map.path): mappings[1].action.command: 'no-such-locker' is not a program in PATH"
        let real = try Binaries.run("winkctl", ["input", "--map", map.path, "--socket", socket, "--once"])
        #expect(real.status == 78 && real.stderrLines == [line], "\(real.stderr)")
        let dry = try Binaries.run("winkctl", ["input", "--map", map.path, "--socket", socket, "--once", "--dry-run"])
        #expect(dry.status == 69 && dry.stderrLines.first == line, "\(dry.stderr)")
        // A path: missing, or there but not a program.
        let paths = [("/nonexistent/locker", "does not exist"), ("/etc/passwd", "is not an executable file")]
        for (program, what) in paths {
            try Data(#"{"mappings": [{"event": "blink", "action": {"command": ["\#(program)"]}}]}"#.utf8).write(to: map)
            let r = try Binaries.run("winkctl", ["input", "--map", map.path, "--socket", socket, "--once"])
            #expect(r.status == 78 && r.stderrLines == [
                "winkctl: \(map.path): mappings[0].action.command: '\(program)' \(what)",
            ], "\(r.stderr)")
        }
    }

    /// Without `--socket`, `winkctl input` looks where winkd and `winkctl events` do (EventSocketPath.default),
    /// here with a relative `XDG_RUNTIME_DIR`, which the XDG specification has ignored.
    @Test func theDefaultSocketIsTheDaemonsEvenForARelativeRuntimeDirectory() throws {
        let dir = try Binaries.temporaryDirectory()
        let map = dir.appendingPathComponent("map.json")
        try Data(#"{"mappings": [{"event": "winkLeft", "action": {"key": "KEY_LEFT"}}]}"#.utf8).write(to: map)
        let environment = ["WINK_SOCKET": "", "XDG_RUNTIME_DIR": "relative-runtime"]
        let input = try Binaries.run("winkctl", ["input", "--map", map.path, "--dry-run", "--once"],
                                     environment: environment)
        let events = try Binaries.run("winkctl", ["events"], environment: environment)
        #expect(input.status == 69 && events.status == 69, "\(input.stderr) \(events.stderr)")
        let named = { (stderr: String) in stderr.split(separator: ":").dropFirst().first.map(String.init) }
        #expect(named(input.stderr) == " /run/winkd/events.sock", "\(input.stderr)")
        #expect(named(input.stderr) == named(events.stderr), "\(input.stderr) \(events.stderr)")
    }
}
