import Capture
import Foundation
import Overlay
import WinkCore

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Paths computed from this file, so the tests run from any worktree.
enum Paths {
    /// The repository root (…/Tests/OverlayTests/TestSupport.swift -> …).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let fixtures = repository.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    static let overlays = fixtures.appendingPathComponent("overlays")
    static let dlibImages = fixtures.appendingPathComponent("images/dlib")
    static let expressions = fixtures.appendingPathComponent("images/expressions")
    static let video = fixtures.appendingPathComponent("video")
    static let golden = repository.appendingPathComponent("Tests/OverlayTests/Golden")
    static let resources = repository.appendingPathComponent("Tests/OverlayTests/Resources")

    static func overlay(_ name: String) -> String { overlays.appendingPathComponent(name).path }

    /// A fresh temporary folder.
    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("overlay-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// One face of dlib's imglab XML: its box and 68 ground-truth landmarks.
struct LabelledFace {
    var landmarks: Landmarks
}

/// One image of dlib's imglab XML (`<image file=...><box ...><part name="00" x y/>...`).
struct LabelledImage {
    var file: String
    var faces: [LabelledFace]
}

/// A small reader for dlib's imglab XML with Foundation's XMLParser.
final class ImglabReader: NSObject, XMLParserDelegate {
    private var images: [LabelledImage] = []
    private var parts: [Int: PixelPoint] = [:]
    private var inBox = false

    static func read(_ url: URL) throws -> [LabelledImage] {
        guard let parser = XMLParser(contentsOf: url) else { throw CocoaError(.fileReadNoSuchFile) }
        let reader = ImglabReader()
        parser.delegate = reader
        guard parser.parse() else { throw parser.parserError ?? CocoaError(.fileReadCorruptFile) }
        return reader.images
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        switch name {
        case "image":
            images.append(LabelledImage(file: attributes["file"] ?? "", faces: []))
        case "box":
            inBox = true
            parts = [:]
        case "part" where inBox:
            if let n = attributes["name"].flatMap({ Int($0) }), let x = attributes["x"].flatMap(Float.init),
                let y = attributes["y"].flatMap(Float.init)
            {
                parts[n] = PixelPoint(x, y)
            }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        guard name == "box" else { return }
        inBox = false
        if parts.count == 68, !images.isEmpty {
            let points = parts
            images[images.count - 1].faces.append(
                LabelledFace(landmarks: Landmarks(points: InlineArray { points[$0]! })))
        }
    }
}

/// Every labelled face in the dlib fixtures, with its image file name.
let labelledImages: [LabelledImage] = {
    let files = ["training_with_face_landmarks.xml", "testing_with_face_landmarks.xml"]
    return files.flatMap { (try? ImglabReader.read(Paths.dlibImages.appendingPathComponent($0))) ?? [] }
}()

/// A colour frame read from an image file.
func loadFrame(_ path: String) throws -> PixelBuffer {
    let source = try StillImageSource(path: path)
    let buffer = PixelBuffer(wantsColor: true)
    _ = try source.read(into: buffer)
    return buffer
}

/// A colour frame of one BGR colour.
func solidFrame(width: Int, height: Int, bgr: SIMD3<UInt8>) -> PixelBuffer {
    let buffer = PixelBuffer(wantsColor: true)
    buffer.resize(width: width, height: height)
    for i in 0..<(width * height) {
        buffer.bgr[3 * i] = bgr.x
        buffer.bgr[3 * i + 1] = bgr.y
        buffer.bgr[3 * i + 2] = bgr.z
    }
    return buffer
}

extension PixelBuffer {
    /// The pixel at column `x`, row `y` as (B, G, R).
    func pixel(_ x: Int, _ y: Int) -> SIMD3<UInt8> {
        let i = 3 * (y * width + x)
        return SIMD3(bgr[i], bgr[i + 1], bgr[i + 2])
    }

    /// A copy of the BGR plane.
    var bgrBytes: [UInt8] { Array(UnsafeBufferPointer(start: bgr, count: width * height * 3)) }

    /// A colour copy of this buffer.
    func clone() -> PixelBuffer {
        let copy = PixelBuffer(wantsColor: true)
        copy.copy(from: self)
        return copy
    }
}

/// Largest per-channel difference between two BGR byte arrays of equal size.
func maximumDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
    precondition(a.count == b.count)
    var m = 0
    for i in a.indices { m = max(m, abs(Int(a[i]) - Int(b[i]))) }
    return m
}

/// The chunks of a PNG file by type (the data of the first chunk of each type), read from the file's
/// framing (length, type, data, CRC; PNG specification section 5.3). Not a decoder: no image data is read.
struct PNGChunks {
    private var chunks: [String: [UInt8]] = [:]

    init(path: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var i = 8
        while i + 8 <= bytes.count {
            let length = bytes[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[(i + 4)..<(i + 8)], as: UTF8.self)
            guard i + 12 + length <= bytes.count else { break }
            if chunks[type] == nil { chunks[type] = Array(bytes[(i + 8)..<(i + 8 + length)]) }
            i += 12 + length
        }
    }

    subscript(type: String) -> [UInt8]? { chunks[type] }
}
