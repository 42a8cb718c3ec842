import Foundation
import TestSupport
import Testing

/// Long offline runs: progress on stderr only when it is a terminal, one closing summary line either way,
/// nothing with --quiet; `bench --json` is one JSON document.
@Suite struct ProgressTests {
    static let clip = Binaries.fixture("people/video/liveportrait_d3.mp4")

    @Test func withoutATerminalOnlyTheSummaryGoesToStderr() throws {
        let r = try Binaries.run("winkctl", ["analyze", Self.clip])
        #expect(r.status == 0)
        #expect(r.stderrLines.count == 1, "\(r.stderr)")
        let line = try #require(r.stderrLines.first)
        // The events counted are the event lines written, `ended` ones too (it counted 10 of 15 such lines:
        // the occurrences only).
        let eventLines = r.stdoutLines.filter { $0.contains(#""type":"event""#) }.count
        #expect(r.stdoutLines.contains { $0.contains(#""phase":"ended""#) })
        #expect(line.hasPrefix("analyze: 354 frames, 354 with a face, \(eventLines) events in "), "\(line)")
        #expect(!r.stderr.contains("\r"))
        #expect(r.stdoutLines.allSatisfy { $0.hasPrefix("{") }, "stdout stays NDJSON")
        let quiet = try Binaries.run("winkctl", ["analyze", Self.clip, "--quiet"])
        func timeless(_ s: String) -> String {
            s.replacingOccurrences(of: #""t_mono_ns":[0-9]+"#, with: "", options: .regularExpression)
        }
        #expect(quiet.status == 0 && quiet.stderr.isEmpty && timeless(quiet.stdout) == timeless(r.stdout))
    }

    /// Under a pseudo-terminal (script(1) gives the command one), the progress line counts frames against
    /// the container's frame count and is erased before the summary.
    @Test func onATerminalTheProgressLineIsRedrawnAndErased() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let winkctl = Binaries.directory.appendingPathComponent("winkctl").path
        p.arguments = [
            "-qec",
            "\(winkctl) analyze \(Self.clip) --plot /nonexistent/x.png; \(winkctl) analyze \(Self.clip) >/dev/null",
            "/dev/null",
        ]
        let r = try Binaries.capture(p)
        #expect(r.stdout.contains("/354 frames ("), "\(r.stdout.suffix(400))")
        #expect(r.stdout.contains("\r\u{1B}[Kanalyze: 354 frames, 354 with a face"), "\(r.stdout.suffix(400))")
        #expect(r.stdout.contains("winkctl: /nonexistent/x.png: no such directory /nonexistent"))
    }

    /// `overlay` on a video: progress on a terminal, its own summary line after it; nothing with --quiet.
    @Test func overlayShowsProgressOnATerminal() throws {
        let out = try Binaries.temporaryDirectory()
        let layout = Binaries.repository.appendingPathComponent("Tests/OverlayTests/Resources/glasses_keep_aspect.json")
            .path
        let winkctl = Binaries.directory.appendingPathComponent("winkctl").path
        let video = Binaries.fixture("video/single_face.mp4")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        p.arguments = ["-qec", "\(winkctl) overlay --layout \(layout) \(video) -o \(out.path)/o.mkv", "/dev/null"]
        let r = try Binaries.capture(p)
        #expect(r.stdout.contains("/72 frames ("), "\(r.stdout.suffix(300))")
        #expect(r.stdout.contains("\r\u{1B}[Koverlay: 72 frame(s), 72 face(s) drawn -> "), "\(r.stdout.suffix(300))")
        let quiet = try Binaries.run(
            "winkctl", ["overlay", "--layout", layout, video, "-o", out.path + "/q.mkv", "--quiet"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
    }

    @Test func evaluateEndsWithTheClipsAndTheTotal() throws {
        let r = try Binaries.run("winkctl", ["evaluate", Binaries.fixture("labels/single_face_wink_left.labels.json")])
        #expect(r.status == 0)
        #expect(
            r.stderrLines.count == 1 && r.stderrLines[0].hasPrefix("evaluate: 80 frames, 80 with a face, ")
                && r.stderrLines[0].hasSuffix("; 1 clip, total F1 1.000"), "\(r.stderr)")
    }

    @Test func benchJSONIsOneDocument() throws {
        let r = try Binaries.run("winkctl", ["bench", Binaries.fixture("video/single_face_wink_left.mp4"), "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let rounds = try #require(object["rounds"] as? [[String: Any]])
        #expect(rounds.count == 1 && rounds[0]["frames"] as? Int == 80)
        let fps = try #require(rounds[0]["fps"] as? [String: Double])
        #expect((fps["total"] ?? 0) > 0 && (fps["process"] ?? 0) >= (fps["total"] ?? 0))
        #expect(
            (rounds[0]["stages"] as? [[String: Any]])?.map { $0["name"] as? String } == [
                "decode", "tracking", "detection", "landmarks", "eye/pose", "expressions", "encode+socket",
            ])
        #expect(object["peakRssMB"] is Double && object["modelLoadSeconds"] is Double)
    }
}
