import Capture
import EventServer
import Foundation
import Testing
import WinkCore

@testable import WinkDaemon

/// What issue 14's restructuring promised to keep true: the status states are one documented enum, the
/// source's kind is decided in one place, and `mirrored` is kept once.
@Suite struct StructureTests {
    static let readme = Fixtures.repository.appendingPathComponent("README.md")

    /// The README's status table lists exactly the states the daemon can send, in the enum's order.
    @Test func theReadmeListsEveryStatusState() throws {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let start = try #require(text.range(of: "<!-- status-states -->"))
        let end = try #require(text.range(of: "<!-- /status-states -->"))
        let listed = text[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `") else { return nil }
            return line.dropFirst(3).prefix { $0 != "`" }.description
        }
        #expect(listed == StatusState.allCases.map(\.rawValue))
    }

    /// A status line goes out with its state's snake_case name, and an unknown name does not decode as a
    /// state.
    @Test func statusStatesTravelAsTheirSnakeCaseNames() throws {
        let line = StatusLine(state: .cameraCorruptFrames, source: "/dev/video0", message: "3 corrupt frames")
        let json = try #require(String(data: JSONEncoder().encode(line), encoding: .utf8))
        #expect(json.contains(#""state":"camera_corrupt_frames""#))
        #expect(try JSONDecoder().decode(StatusLine.self, from: Data(json.utf8)) == line)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(StatusLine.self, from: Data(#"{"type":"status","state":"camera_open"}"#.utf8))
        }
    }

    /// A source under /dev is a camera even before it exists (it is waited for); anything else is a file.
    @Test func theSourceKindComesFromTheName() {
        #expect(SourceKind(source: nil) == .camera)
        #expect(SourceKind(source: "/dev/video7") == .camera)
        #expect(SourceKind(source: "/dev/v4l/by-id/usb-Cam-video-index0") == .camera)
        #expect(SourceKind(source: "clip.mp4") == .recording)
        #expect(SourceKind(source: "/home/me/dev/clip.mp4") == .recording)
    }

    /// A still image says so; a video and a transformed still say what their source is.
    @Test func aStillImageSaysItIsStill() throws {
        let still = try StillImageSource(path: Fixtures.path("images/expressions/single_face.jpg"))
        defer { still.close() }
        #expect(still.isStill)
        #expect(TransformedSource(still, FrameTransform(flip: true)).isStill)
        let video = try openMediaFile(path: Fixtures.path("video/single_face.mp4"))
        defer { video.close() }
        #expect(!video.isStill)
    }

    /// A transformed source reported 0 corrupt frames and 0 buffers dequeued whatever its base had (the
    /// doc-comment review's finding): it passes on every count of its base.
    @Test func aTransformedSourcePassesOnItsBasesCounts() throws {
        final class Counting: FrameSource {
            let name = "counting"
            let isLive = true
            let nominalFrameRate: Double? = 30
            var corruptFramesDropped: Int { 3 }
            var framesDequeued: Int { 40 }
            var damage: String? { "3 corrupt frames" }
            func read(into buffer: PixelBuffer) throws -> FrameInfo? { nil }
            func close() {}
        }
        let transformed = TransformedSource(Counting(), FrameTransform(flip: true))
        #expect(transformed.corruptFramesDropped == 3 && transformed.framesDequeued == 40)
        #expect(transformed.damage == "3 corrupt frames" && transformed.isLive && transformed.nominalFrameRate == 30)
    }

    /// `mirrored` is one setting: the top-level key and the flag reach the tracker, and the tracker section
    /// does not take a second spelling of it.
    @Test func mirroredIsKeptOnce() throws {
        let c = try Configuration.parse(Data(#"{"mirrored": true, "tracker": {"detectionWidth": 400}}"#.utf8))
        #expect(c.mirrored && c.tracker.mirrored && c.tracker.detectionWidth == 400)
        #expect(FramePipeline(configuration: c, predictor: sharedPredictor).tracker.settings.mirrored)
        do {
            _ = try Configuration.parse(Data(#"{"tracker": {"mirrored": true}}"#.utf8))
            Issue.record("tracker.mirrored was accepted")
        } catch let error as Configuration.Invalid {
            #expect(
                error.problems.contains { $0.hasPrefix("tracker.") && $0.contains("mirrored") }, "\(error.problems)")
        }
    }
}
