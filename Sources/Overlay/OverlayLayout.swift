import Foundation
import WinkCore

/// One layer of a face layout: an image attached to a face feature (SPEC.md "Overlay layouts").
///
/// The feature's box is the bounding box of its landmarks, taken in the face's own frame (turned by the
/// head's roll) when `rotate` is true, in the image's axes otherwise. The layer's rectangle is that box
/// scaled about its centre by `sizeRatio`, then moved by `offset` (fractions of the unscaled box's width and
/// height; positive y is down the face). `fit` then decides whether the image fills that rectangle
/// (`stretch`, SPEC.md's behaviour and the default) or keeps its own aspect ratio. See
/// `LayerPlacement.place(_:on:imageSize:)`.
public struct OverlayLayer: Sendable, Equatable {
    /// How the layer image fills the layer's rectangle (the feature box scaled by `sizeRatio`); layout key
    /// `"fit"`. Every mode but `stretch` keeps the image's own width:height ratio, so sunglasses stay
    /// sunglasses on a face whose eye box flattens (a smile, a squint).
    public enum Fit: String, Sendable, Equatable, CaseIterable {
        /// The image is stretched over the whole rectangle (SPEC.md "Overlay layouts"). The default.
        case stretch
        /// The rectangle's width; the height follows from the image's aspect ratio (`sizeRatio.height`
        /// is not used).
        case width
        /// The rectangle's height; the width follows from the image's aspect ratio (`sizeRatio.width` is
        /// not used).
        case height
        /// The largest size of the image's aspect ratio inside the rectangle, centred in it.
        case contain
    }

    /// The face part the layer follows.
    public var feature: FaceFeature
    /// Path of the PNG, already resolved against the layout file's folder when loaded from a file.
    public var image: String
    /// Width and height of the layer relative to the feature box's; both > 0. Default (1, 1).
    public var sizeRatio: SIMD2<Float>
    /// Shift of the layer's centre in units of the feature box's width (x) and height (y); positive y is
    /// down. Default (0, 0).
    public var offset: SIMD2<Float>
    /// Whether the layer turns with the head's roll (default true).
    public var rotate: Bool
    /// Opacity multiplied into the image's alpha, 0...1 (default 1).
    public var opacity: Float
    /// Whether the image keeps its aspect ratio, and which side of the rectangle sets its size (default
    /// `.stretch`: none, the image fills the rectangle).
    public var fit: Fit

    /// A layer; `sizeRatio` and `offset` in units of the feature box, `opacity` in 0...1.
    public init(
        feature: FaceFeature, image: String, sizeRatio: SIMD2<Float> = [1, 1], offset: SIMD2<Float> = [0, 0],
        rotate: Bool = true, opacity: Float = 1, fit: Fit = .stretch
    ) {
        self.feature = feature
        self.image = image
        self.sizeRatio = sizeRatio
        self.offset = offset
        self.rotate = rotate
        self.opacity = opacity
        self.fit = fit
    }
}

/// A face layout: layers drawn in order on every face (SPEC.md "Overlay layouts").
///
/// ```json
/// {"layers": [{"feature": "eyes", "image": "sunglasses.png", "sizeRatio": {"width": 1.4, "height": 3.0},
///              "offset": {"x": 0.0, "y": 0.1}, "rotate": true, "opacity": 1.0, "fit": "width"}]}
/// ```
/// `sizeRatio` may also be a single number for both axes. `fit` (an addition to SPEC.md's keys) is one of
/// `stretch` (the default), `width`, `height`, `contain` (see `OverlayLayer.Fit`). Unknown keys are refused,
/// so a typo is reported.
public struct OverlayLayout: Sendable, Equatable {
    /// The layers, drawn in order (the first lowest), at most `maximumLayers`.
    public var layers: [OverlayLayer]

    /// A layout of `layers`, unchecked.
    public init(layers: [OverlayLayer]) { self.layers = layers }

    /// The most layers a layout may have: 64, far above a real one (a layer per face feature, a few stacked),
    /// so that a small file cannot ask for thousands of images to be cached and drawn on every face.
    public static let maximumLayers = 64

    /// The largest layout file read: 1 MiB (a layout of a few layers is under 1 KB).
    public static let maximumFileBytes = 1 << 20

    /// Reads a layout file; image paths are resolved against the file's folder (absolute ones are kept).
    /// Only a regular file of at most `maximumFileBytes` is read.
    /// - Throws: `OverlayError` `.missing` (exit 66) when the file does not exist, cannot be read or is not a
    ///   regular file, `.badLayout` (exit 78) naming the offending key (e.g. `layers[1].sizeRatio.width`) for
    ///   anything malformed, or for a file over the size limit.
    public static func load(path: String) throws -> OverlayLayout {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let reason = errno == ENOENT ? "no such layout file" : String(cString: strerror(errno))
            throw OverlayError(.missing, subject: path, reason: reason)
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw OverlayError(.missing, subject: path, reason: "is a directory, not a layout file")
        case let kind:
            let name = [S_IFIFO: "a FIFO", S_IFCHR: "a character device", S_IFBLK: "a block device",
                        S_IFSOCK: "a socket"][kind] ?? "not a file"
            throw OverlayError(.missing, subject: path, reason: "not a regular file (\(name))")
        }
        guard st.st_size <= maximumFileBytes else {
            throw OverlayError(.badLayout, subject: path,
                               reason: "the file is \(st.st_size) bytes, over the limit of 1 MiB for a layout")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw OverlayError(.missing, subject: path, reason: "cannot read the layout file" + readFailureNote(path))
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try OverlayLayout(json: data, baseDirectory: folder, name: path)
    }

    /// Parses layout JSON.
    /// - Parameters:
    ///   - baseDirectory: folder that relative `image` paths are resolved against.
    ///   - name: what to call the layout in error messages (its path).
    /// - Throws: `OverlayError.badLayout` (exit 78) naming the offending key.
    public init(json: Data, baseDirectory: String, name: String) throws {
        let file: LayoutFile
        do {
            file = try JSONDecoder().decode(LayoutFile.self, from: json)
        } catch let error as DecodingError {
            // JSONDecoder says only "not valid JSON"; JSONSerialization says where and what ("Unexpected end of
            // file", "Number 1e999 is not representable in Swift.").
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
               let reason = invalidJSONReason(json) {
                throw OverlayError(.badLayout, subject: name, reason: reason)
            }
            throw OverlayError(.badLayout, subject: name, reason: Self.describe(error))
        } catch {
            throw OverlayError(.badLayout, subject: name, reason: "not a layout: \(error)")
        }
        if let repeated = JSONDuplicateKeys.find(in: json).first {
            throw OverlayError(.badLayout, subject: name, reason: repeated)
        }
        guard file.layers.count <= Self.maximumLayers else {
            throw OverlayError(
                .badLayout, subject: name,
                reason: "layers: \(file.layers.count) layers, over the limit of \(Self.maximumLayers)")
        }
        layers = file.layers.map { layer in
            var resolved = layer
            if !layer.image.hasPrefix("/") {
                resolved.image = URL(fileURLWithPath: baseDirectory).appendingPathComponent(layer.image).path
            }
            return resolved
        }
    }

    /// "layers[1].sizeRatio.width: expected a number" from a decoding error.
    static func describe(_ error: DecodingError) -> String {
        func keyPath(_ path: [any CodingKey]) -> String {
            var text = ""
            for key in path {
                if let i = key.intValue {
                    text += "[\(i)]"
                } else {
                    text += text.isEmpty ? key.stringValue : "." + key.stringValue
                }
            }
            return text.isEmpty ? "(top level)" : text
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(keyPath(context.codingPath)): expected \(jsonTypeName(type))"
        case .valueNotFound(let type, let context):
            return "\(keyPath(context.codingPath)): expected \(jsonTypeName(type)), got null"
        case .keyNotFound(let key, let context):
            return "\(keyPath(context.codingPath + [key])): missing"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return "not valid JSON"
            }
            return "\(keyPath(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "not a layout"
        }
    }

}

// MARK: - Decoding

/// Any JSON object key, for spotting unknown keys.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// Throws `dataCorrupted` at the first key of `container` not in `known`.
func refuseUnknownKeys(_ container: KeyedDecodingContainer<AnyKey>, known: Set<String>) throws {
    for key in container.allKeys where !known.contains(key.stringValue) {
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: container.codingPath + [key],
                debugDescription: "unknown key (expected one of \(known.sorted().joined(separator: ", ")))"))
    }
}

struct LayoutFile: Decodable {
    var layers: [OverlayLayer]

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        try refuseUnknownKeys(c, known: ["layers"])
        layers = try c.decode([LayerEntry].self, forKey: AnyKey("layers")).map(\.layer)
    }
}

struct LayerEntry: Decodable {
    var layer: OverlayLayer

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        try refuseUnknownKeys(c, known: ["feature", "image", "sizeRatio", "offset", "rotate", "opacity", "fit"])
        let featureKey = AnyKey("feature")
        let featureName = try c.decode(String.self, forKey: featureKey)
        guard let feature = FaceFeature(rawValue: featureName) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath + [featureKey],
                    debugDescription: "unknown feature '\(featureName)' (expected one of "
                        + FaceFeature.allCases.map(\.rawValue).joined(separator: ", ") + ")"))
        }
        let image = try c.decode(String.self, forKey: AnyKey("image"))
        guard !image.isEmpty else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath + [AnyKey("image")],
                    debugDescription: "empty image path"))
        }
        var ratio = SIMD2<Float>(1, 1)
        let ratioKey = AnyKey("sizeRatio")
        if c.contains(ratioKey) {
            if (try? c.decode(Double.self, forKey: ratioKey)) != nil {
                let uniform = try Self.number(c, ratioKey) ?? 1
                ratio = SIMD2(uniform, uniform)
                try Self.requirePositive(uniform, at: c.codingPath + [ratioKey])
            } else {
                guard let r = try? c.nestedContainer(keyedBy: AnyKey.self, forKey: ratioKey) else {
                    throw DecodingError.dataCorrupted(
                        .init(
                            codingPath: c.codingPath + [ratioKey],
                            debugDescription: "expected a positive number or an object with width and height"))
                }
                try refuseUnknownKeys(r, known: ["width", "height"])
                ratio.x = try Self.number(r, AnyKey("width")) ?? 1
                ratio.y = try Self.number(r, AnyKey("height")) ?? 1
                try Self.requirePositive(ratio.x, at: r.codingPath + [AnyKey("width")])
                try Self.requirePositive(ratio.y, at: r.codingPath + [AnyKey("height")])
            }
        }
        var offset = SIMD2<Float>(0, 0)
        if c.contains(AnyKey("offset")) {
            let o = try c.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("offset"))
            try refuseUnknownKeys(o, known: ["x", "y"])
            offset.x = try Self.number(o, AnyKey("x")) ?? 0
            offset.y = try Self.number(o, AnyKey("y")) ?? 0
            for (key, v) in [("x", offset.x), ("y", offset.y)] where !v.isFinite {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: o.codingPath + [AnyKey(key)],
                        debugDescription: "expected a finite number"))
            }
        }
        let rotate = try c.decodeIfPresent(Bool.self, forKey: AnyKey("rotate")) ?? true
        let opacityKey = AnyKey("opacity")
        let opacity = try Self.number(c, opacityKey) ?? 1
        guard (0...1).contains(opacity) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath + [opacityKey],
                    debugDescription: "expected a number in 0...1, got \(plainNumber(opacity))"))
        }
        let fitKey = AnyKey("fit")
        var fit = OverlayLayer.Fit.stretch
        if let name = try c.decodeIfPresent(String.self, forKey: fitKey) {
            guard let known = OverlayLayer.Fit(rawValue: name) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: c.codingPath + [fitKey],
                        debugDescription: "unknown fit '\(name)' (expected one of "
                            + OverlayLayer.Fit.allCases.map(\.rawValue).joined(separator: ", ") + ")"))
            }
            fit = known
        }
        layer = OverlayLayer(
            feature: feature, image: image, sizeRatio: ratio, offset: offset, rotate: rotate,
            opacity: opacity, fit: fit)
    }

    /// The number at `key` (nil when absent or null) as a `Float`. A number beyond a Float's range (3.4e38),
    /// which the decoder reported as "not valid JSON", is named with its key.
    /// - Throws: `typeMismatch` for a value that is not a number; `dataCorrupted` for one out of range.
    static func number(_ c: KeyedDecodingContainer<AnyKey>, _ key: AnyKey) throws -> Float? {
        let value: Double?
        do {
            value = try c.decodeIfPresent(Double.self, forKey: key)
        } catch DecodingError.dataCorrupted {
            value = .infinity  // a literal beyond even a Double's range
        }
        guard let value else { return nil }
        guard value.magnitude <= Double(Float.greatestFiniteMagnitude) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: c.codingPath + [key],
                    debugDescription: "a number beyond this setting's range (at most 3.4e38 either way)"))
        }
        return Float(value)
    }

    static func requirePositive(_ value: Float, at path: [any CodingKey]) throws {
        guard value > 0, value.isFinite else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: path,
                    debugDescription: "expected a positive number, got \(plainNumber(value))"))
        }
    }
}
