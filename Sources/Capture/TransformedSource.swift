import CWinkMedia
import Foundation
import WinkCore

/// A geometric and photometric change applied to every frame of another source: for deriving test
/// variants from recordings (a rotated head, a darker room, a smaller face, a mirrored view).
public struct FrameTransform: Sendable, Equatable {
    /// Rotation in degrees about the frame centre, counter-clockwise in the image.
    public var degrees: Double = 0
    /// Uniform scale; the output frame is the input size times `scale` when `resizeFrame`, else the same size.
    public var scale: Double = 1
    /// Mirror the frame left-right first.
    public var flip = false
    /// Whether the output frame shrinks/grows with `scale`.
    public var resizeFrame = true
    /// Multiply grey levels by this (a darker room).
    public var gain: Double = 1
    /// Standard deviation of added Gaussian sensor noise, in grey levels (deterministic seed).
    public var noise: Double = 0
    /// Seed of the noise generator: the same seed gives the same noise.
    public var seed: UInt64 = 1

    /// A transform; `degrees` counter-clockwise, `gain` a factor, `noise` a standard deviation in grey levels.
    public init(
        degrees: Double = 0, scale: Double = 1, flip: Bool = false, resizeFrame: Bool = true,
        gain: Double = 1, noise: Double = 0, seed: UInt64 = 1
    ) {
        self.degrees = degrees
        self.scale = scale
        self.flip = flip
        self.resizeFrame = resizeFrame
        self.gain = gain
        self.noise = noise
        self.seed = seed
    }
}

/// Applies a `FrameTransform` to the grey plane of every frame of `base` (OpenCV `warpAffine`, bilinear).
/// Only the grey plane is produced. Not thread-safe.
public final class TransformedSource: FrameSource {
    /// The source whose frames are transformed.
    public let base: FrameSource
    /// What is done to each frame.
    public let transform: FrameTransform
    private let input = PixelBuffer()
    private let noise: SensorNoise

    /// `base` seen through `transform`; `base` is read and closed through this source.
    public init(_ base: FrameSource, _ transform: FrameTransform) {
        self.base = base
        self.transform = transform
        noise = SensorNoise(sigma: transform.noise, seed: transform.seed)
    }

    /// `base`'s name.
    public var name: String { base.name }
    /// Whether `base` is live.
    public var isLive: Bool { base.isLive }
    /// Whether `base` is a still image.
    public var isStill: Bool { base.isStill }
    /// `base`'s expected frame count.
    public var expectedFrameCount: Int? { base.expectedFrameCount }
    /// `base`'s nominal frames per second.
    public var nominalFrameRate: Double? { base.nominalFrameRate }
    /// `base`'s damage note.
    public var damage: String? { base.damage }
    /// `base`'s count of corrupt frames or damaged packets dropped.
    public var corruptFramesDropped: Int { base.corruptFramesDropped }
    /// `base`'s count of buffers dequeued (a camera's; 0 for others).
    public var framesDequeued: Int { base.framesDequeued }

    /// Reads the next frame of `base` and writes its transformed grey plane into `buffer` (`bgr` untouched), at
    /// the input size times `scale` (at least 8 pixels a side) when `resizeFrame`, else the input size.
    /// - Returns: `base`'s frame info unchanged; nil at its end.
    /// - Throws: `base`'s errors; `CaptureError.internal` (exit 70) when the warp fails.
    public func read(into buffer: PixelBuffer) throws -> FrameInfo? {
        guard let info = try base.read(into: input) else { return nil }
        let w = transform.resizeFrame ? max(8, Int((Double(input.width) * transform.scale).rounded())) : input.width
        let h = transform.resizeFrame ? max(8, Int((Double(input.height) * transform.scale).rounded())) : input.height
        buffer.resize(width: w, height: h)
        let status = wm_warp_gray(
            input.gray, Int32(input.width), Int32(input.height), transform.degrees,
            transform.scale, transform.flip ? 1 : 0, buffer.gray, Int32(w), Int32(h))
        guard status == WM_OK else { throw CaptureError(.internal, subject: name, reason: "frame transform failed") }
        if transform.gain != 1 {
            for i in 0..<(w * h) {
                buffer.gray[i] = UInt8(max(0, min(255, (Double(buffer.gray[i]) * transform.gain).rounded())))
            }
        }
        noise.apply(buffer)
        return info
    }

    /// Closes `base`.
    public func close() { base.close() }
}

/// Repeats the first frame of `base` for `seconds` at `framesPerSecond`, with fresh sensor noise on each
/// copy: a person holding perfectly still.
public final class RepeatedFrameSource: FrameSource {
    private let first = PixelBuffer()
    private let frames: Int
    private let rate: Double
    private var index = 0
    private let noise: SensorNoise

    /// `base`'s name.
    public let name: String
    /// False: frames are made as fast as they are read.
    public let isLive = false
    /// `framesPerSecond`.
    public var nominalFrameRate: Double? { rate }

    /// Reads the first frame of `base` to repeat `seconds * framesPerSecond` times (rounded down), with
    /// Gaussian noise of standard deviation `noise` grey levels (fixed seed). `base` is not kept.
    /// - Throws: `base`'s read errors; `CaptureError.notMedia` (exit 65) when `base` has no frame.
    public init(_ base: FrameSource, seconds: Double, framesPerSecond: Double = 30, noise: Double = 2) throws {
        name = base.name
        rate = framesPerSecond
        frames = Int(seconds * framesPerSecond)
        guard try base.read(into: first) != nil else {
            throw CaptureError(.notMedia, subject: base.name, reason: "no frame to repeat")
        }
        self.noise = SensorNoise(sigma: noise, seed: 7)
    }

    /// The next copy (grey plane and, when both buffers want colour, BGR) with fresh noise; frame i is at
    /// i / `framesPerSecond` seconds, and its monotonic time is the same in nanoseconds. nil after the last.
    public func read(into buffer: PixelBuffer) throws -> FrameInfo? {
        guard index < frames else { return nil }
        buffer.copy(from: first)
        noise.apply(buffer)
        defer { index += 1 }
        return FrameInfo(
            index: index, time: Double(index) / rate, monotonicNanoseconds: UInt64(Double(index) / rate * 1e9))
    }

    /// Does nothing (the first frame was copied at init).
    public func close() {}
}

/// Deterministic Gaussian noise (Box-Muller over xorshift64*) added to a grey plane.
final class SensorNoise {
    private var rng: UInt64
    let sigma: Double
    init(sigma: Double, seed: UInt64) {
        self.sigma = sigma
        rng = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    }

    func apply(_ buffer: PixelBuffer) {
        guard sigma > 0 else { return }
        for i in 0..<(buffer.width * buffer.height) {
            let v = Double(buffer.gray[i]) + gaussian() * sigma
            buffer.gray[i] = UInt8(max(0, min(255, v.rounded())))
        }
    }

    private func gaussian() -> Double {
        func uniform() -> Double {
            rng ^= rng >> 12
            rng ^= rng << 25
            rng ^= rng >> 27
            return Double((rng &* 0x2545_F491_4F6C_DD1D) >> 11) / Double(1 << 53) + 1e-12
        }
        let u = uniform()
        let v = uniform()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}
