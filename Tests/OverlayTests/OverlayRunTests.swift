import Capture
import FaceTracking
import Foundation
import Overlay
import Testing
import WinkCore

/// How the runs read a written video back: FFmpeg through Capture, as `winkctl overlay` does.
func readBack(_ path: String) throws -> any FrameSource { try VideoFileSource(path: path) }

/// Whole runs with the real detector and the Debian 68-point model (package libdlib-data).
@Suite(.serialized)
struct OverlayRunTests {
    static let modelPath = ProcessInfo.processInfo.environment["WINK_MODEL"] ?? ShapePredictor.debianModelPath

    /// An opaque orange square (square_rgb_trns.png's centre) on the nose, so every face gets a visible mark.
    func noseLayout(in folder: URL) throws -> OverlayLayout {
        let path = folder.appendingPathComponent("nose.json")
        let json =
            #"{"layers": [{"feature": "nose", "image": "\#(Paths.overlay("square_rgb_trns.png"))", "sizeRatio": 2.5}]}"#
        try Data(json.utf8).write(to: path)
        return try OverlayLayout.load(path: path.path)
    }

    @Test func everyFaceOfMultiFaceGetsTheLayout() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let renderer = try OverlayRenderer(layout: try noseLayout(in: folder))
        let tracker = FaceTracker(predictor: try ShapePredictor(path: Self.modelPath))
        let input = Paths.expressions.appendingPathComponent("multi_face.jpg").path
        let output = folder.appendingPathComponent("multi.png").path
        var found: [FaceObservation] = []
        let summary = try OverlayRun.run(
            source: try openMediaFile(path: input), output: output, renderer: renderer, readBack: readBack
        ) {
            found = try tracker.detectAll($0, upsample: 1)
            return found
        }
        #expect(summary.frames == 1)
        #expect(found.count >= 4)
        #expect(summary.faces == found.count)
        // The written PNG shows the square's orange (RGB 0,128,255) at the middle of every face's layer.
        let written = try loadFrame(output)
        let original = try loadFrame(input)
        #expect(written.width == original.width && written.height == original.height)
        for face in found {
            let p = LayerPlacement.place(renderer.layers[0], on: face.landmarks)
            let pixel = written.pixel(Int(p.center.x.rounded()), Int(p.center.y.rounded()))
            #expect(abs(Int(pixel.x) - 255) <= 2 && abs(Int(pixel.y) - 128) <= 2 && pixel.z <= 2, "\(pixel)")
        }
    }

    @Test func videoRunKeepsFrameCountRateAndSize() throws {
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let renderer = try OverlayRenderer(
            layout: try OverlayLayout.load(
                path: Paths.resources.appendingPathComponent("glasses_and_moustache.json").path))
        let tracker = FaceTracker(predictor: try ShapePredictor(path: Self.modelPath))
        let input = Paths.video.appendingPathComponent("single_face.mp4").path
        for name in ["out.mp4", "out.avi"] {
            let output = folder.appendingPathComponent(name).path
            let summary = try OverlayRun.run(
                source: try openMediaFile(path: input), output: output, renderer: renderer, readBack: readBack
            ) {
                try tracker.detectAll($0, upsample: 0)
            }
            #expect(summary.frames == 72)
            #expect(summary.faces >= 70)
            let reread = try VideoFileSource(path: output)
            #expect(reread.width == 640 && reread.height == 360)
            #expect(abs((reread.nominalFrameRate ?? 0) - 30) < 0.1)
            let buffer = PixelBuffer()
            var frames = 0
            while try reread.read(into: buffer) != nil { frames += 1 }
            #expect(frames == 72, "\(name)")
        }
    }

    @Test func outputKindsFollowTheExtension() throws {
        #expect(OverlayOutputKind(path: "a/b.PNG") == .image)
        #expect(OverlayOutputKind(path: "b.jpeg") == .image)
        #expect(OverlayOutputKind(path: "b.mp4") == .video)
        #expect(OverlayOutputKind(path: "b.avi") == .video)
        #expect(OverlayOutputKind(path: "b.gif") == nil)
        #expect(OverlayOutputKind(path: "dir.png/file") == nil)
        let frame = solidFrame(width: 8, height: 8, bgr: [1, 2, 3])
        #expect {
            try writeImage(frame, to: "/nonexistent-dir/x.png")
        } throws: { error in
            (error as? OverlayError)?.code == .output && (error as? OverlayError)?.subject == "/nonexistent-dir/x.png"
        }
        #expect {
            try OverlayVideoWriter(path: "/tmp/x.gif", width: 8, height: 8, framesPerSecond: 30)
        } throws: { error in (error as? OverlayError)?.code == .output }
    }

    @Test func anImageOutputRefusesAVideoInput() throws {
        let renderer = try OverlayRenderer(layers: [], images: [])
        let input = Paths.video.appendingPathComponent("single_face.mp4").path
        let folder = try Paths.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect {
            try OverlayRun.run(
                source: try openMediaFile(path: input), output: folder.appendingPathComponent("x.png").path,
                renderer: renderer, readBack: readBack
            ) { _ in [] }
        } throws: { error in (error as? OverlayError)?.code == .output }
    }

    @Test func benchmarkReportsAPositiveTime() throws {
        let ms = try OverlayBenchmark.run(frames: 20, warmup: 2)
        #expect(ms > 0 && ms < 1000)
    }
}
