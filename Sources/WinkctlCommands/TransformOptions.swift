import Capture
import WinkCore
import WinkDaemon

/// The test-variant options of `winkctl analyze` and `winkctl evaluate`: the recording rotated, scaled,
/// darkened or given sensor noise before the pipeline sees it (`TransformedSource`), to measure how the
/// expressions hold up on footage unlike the recording's. `--flip` (a mirror image, which swaps the
/// person's left and right) is analyze's only: labels would have to swap their winks with it.
enum TransformOptions {
    /// `--rotate`, `--scale`, `--gain`, `--noise`.
    static let specs: [OptionSpec] = [
        OptionSpec("--rotate", .text("DEG"), "rotate the frames by DEG degrees, -180...180", default: "0"),
        OptionSpec("--scale", .text("S"), "scale the frames by S, 0.05...4", default: "1"),
        OptionSpec("--gain", .text("G"), "multiply brightness by G, 0...4", default: "1"),
        OptionSpec("--noise", .text("SIGMA"), "add Gaussian sensor noise of SIGMA grey levels, 0...64", default: "0"),
    ]

    /// Reads `specs` from `args` (and `--flip` when `flip` is true).
    /// - Throws: `UsageError` (64) for a value that is not a number or out of its range.
    static func parse(_ args: inout Arguments, flip: Bool = false) throws -> FrameTransform {
        var transform = FrameTransform()
        if flip { transform.flip = args.flag("--flip") }
        transform.degrees = try args.number("--rotate", in: -180.0...180.0) ?? 0
        transform.scale = try args.number("--scale", in: 0.05...4.0) ?? 1
        transform.gain = try args.number("--gain", in: 0.0...4.0) ?? 1
        transform.noise = try args.number("--noise", in: 0.0...64.0) ?? 0
        transform.resizeFrame = transform.degrees == 0
        return transform
    }

    /// Whether `transform` leaves every frame as it is.
    static func isIdentity(_ transform: FrameTransform) -> Bool {
        transform == FrameTransform(resizeFrame: transform.resizeFrame)
    }

    /// The options that give `transform` (`--rotate 15 --noise 4`, in `specs` order), or nil for none: what a
    /// report says it was measured through.
    static func describe(_ transform: FrameTransform) -> String? {
        guard !isIdentity(transform) else { return nil }
        var parts: [String] = []
        if transform.flip { parts.append("--flip") }
        if transform.degrees != 0 { parts.append("--rotate \(plainNumber(transform.degrees))") }
        if transform.scale != 1 { parts.append("--scale \(plainNumber(transform.scale))") }
        if transform.gain != 1 { parts.append("--gain \(plainNumber(transform.gain))") }
        if transform.noise != 0 { parts.append("--noise \(plainNumber(transform.noise))") }
        return parts.joined(separator: " ")
    }

    /// `source` seen through `transform`, or `source` itself when the transform changes nothing.
    static func apply(_ transform: FrameTransform, to source: FrameSource) -> FrameSource {
        isIdentity(transform) ? source : TransformedSource(source, transform)
    }
}
