import Capture
import FaceTracking
import Foundation
import Testing
import WinkCore

/// The compact model cache: built on first use, bit-identical to dlib's deserialised model, never trusted
/// when stale or corrupt. Each test that builds a cache pays one dlib load (about 1 s).
@Suite(.serialized)
struct ModelCacheTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    static let model = ShapePredictor.debianModelPath

    func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("winkd-cache-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    func frame(_ relative: String) throws -> PixelBuffer {
        let buffer = PixelBuffer()
        _ = try openMediaFile(path: Self.fixtures.appendingPathComponent(relative).path).read(into: buffer)
        return buffer
    }

    @Test func coldLoadBuildsTheCacheAndTheWarmLoadPredictsBitIdenticalLandmarks() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = ModelCache(directory: dir + "/nested/winkd")
        let cold = try ShapePredictor.load(path: Self.model, cache: cache)
        guard case .built = cold.outcome else {
            Issue.record("cold load: \(String(describing: cold.outcome))")
            return
        }
        #expect(FileManager.default.fileExists(atPath: cache.file(for: Self.model)))

        let warm = try ShapePredictor.load(path: Self.model, cache: cache)
        #expect(warm.outcome == .hit)
        #expect(warm.predictor.isIdentical(to: cold.predictor))

        var compared = 0
        for image in [
            "images/expressions/single_face.jpg", "images/expressions/0-f15-hao-ph.jpg",
            "images/expressions/45-m7-di-ph.jpg",
        ] {
            let buffer = try frame(image)
            let boxes = try FaceDetector().detect(in: buffer, scale: 1, upsample: 1)
            for box in boxes {
                // A shifted box too, so the trees take other paths.
                for b in [box, PixelRect(x: box.x + 7, y: box.y - 5, width: box.width * 1.1, height: box.height * 1.1)]
                {
                    let a = try cold.predictor.landmarks(in: buffer, box: b)
                    let c = try warm.predictor.landmarks(in: buffer, box: b)
                    #expect((0..<Landmarks.count).allSatisfy { a[$0] == c[$0] }, "\(image)")
                    compared += 1
                }
            }
        }
        #expect(compared >= 6)
    }

    @Test func aCorruptCacheIsIgnoredAndRebuilt() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = ModelCache(directory: dir)
        let first = try ShapePredictor.load(path: Self.model, cache: cache)
        let file = cache.file(for: Self.model)
        // Flip one bit deep inside the payload (a leaf value): only the checksum can notice.
        let handle = try #require(FileHandle(forUpdatingAtPath: file))
        try handle.seek(toOffset: 40_000_000)
        var byte = try #require(try handle.read(upToCount: 1))
        byte[0] ^= 0x01
        try handle.seek(toOffset: 40_000_000)
        try handle.write(contentsOf: byte)
        try handle.close()

        let second = try ShapePredictor.load(path: Self.model, cache: cache)
        #expect(second.outcome == .built(reason: "cache checksum mismatch (SHA-256)"))
        #expect(second.predictor.isIdentical(to: first.predictor))
        #expect(try ShapePredictor.load(path: Self.model, cache: cache).outcome == .hit)

        // Truncated: ignored too.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(truncate(file, off_t(size - 4)) == 0)
        #expect(
            try ShapePredictor.load(path: Self.model, cache: cache).outcome
                == .built(reason: "cache truncated or extended"))

        // Not a cache at all.
        try Data("hello".utf8).write(to: URL(fileURLWithPath: file))
        #expect(
            try ShapePredictor.load(path: Self.model, cache: cache).outcome == .built(reason: "not a winkd model cache")
        )
    }

    @Test func aChangedModelFileMakesTheCacheStale() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let copy = dir + "/model.dat"
        try FileManager.default.copyItem(atPath: Self.model, toPath: copy)
        let cache = ModelCache(directory: dir + "/cache")
        _ = try ShapePredictor.load(path: copy, cache: cache)
        #expect(try ShapePredictor.load(path: copy, cache: cache).outcome == .hit)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: copy)
        #expect(
            try ShapePredictor.load(path: copy, cache: cache).outcome
                == .built(reason: "stale cache: the model file's size or modification time changed"))
    }

    @Test func anUnwritableCacheDirectoryFallsBackToTheModelFile() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let blocker = dir + "/file"
        try Data().write(to: URL(fileURLWithPath: blocker))
        let loaded = try ShapePredictor.load(path: Self.model, cache: ModelCache(directory: blocker + "/winkd"))
        guard case .notWritten(let reason) = loaded.outcome else {
            Issue.record("outcome \(String(describing: loaded.outcome))")
            return
        }
        #expect(reason.contains(blocker))
        let points = try loaded.predictor.landmarks(
            in: try frame("images/expressions/single_face.jpg"),
            box: PixelRect(x: 100, y: 100, width: 200, height: 200))
        #expect(points[30].x > 100 && points[30].x < 300)
    }

    @Test func modelFileErrorsAreUnchangedWithACache() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = ModelCache(directory: dir)
        #expect(
            throws: FaceTrackingError(.modelMissing, subject: dir + "/absent.dat", reason: "model file does not exist")
        ) {
            try ShapePredictor(path: dir + "/absent.dat", cache: cache)
        }
        try Data("not a model".utf8).write(to: URL(fileURLWithPath: dir + "/text.dat"))
        do {
            _ = try ShapePredictor(path: dir + "/text.dat", cache: cache)
            Issue.record("a text file loaded as a model")
        } catch let error as FaceTrackingError {
            #expect(error.code == .modelNotDlib && error.exitCode == .configuration)
        }
        #expect(throws: FaceTrackingError.self) { try ShapePredictor(path: dir, cache: cache) }
    }

    @Test func defaultDirectoryFollowsXDG() {
        #expect(
            ModelCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "/var/c", "HOME": "/home/a"]) == "/var/c/winkd")
        #expect(
            ModelCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "rel", "HOME": "/home/a"])
                == "/home/a/.cache/winkd")
        #expect(ModelCache.defaultDirectory(environment: [:]) == nil)
        let cache = ModelCache(directory: "/c")
        #expect(cache.file(for: "/a/m.dat").hasPrefix("/c/m.dat-"))
        #expect(cache.file(for: "/a/m.dat") != cache.file(for: "/b/m.dat"))
        #expect(cache.file(for: "/a/./m.dat") == cache.file(for: "/a/m.dat"))
    }
}
