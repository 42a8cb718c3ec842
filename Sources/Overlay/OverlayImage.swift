import CWinkOverlay
import WinkCore

/// A decoded overlay image: straight (not premultiplied) RGBA, 8 bits a sample, rows top to bottom,
/// tightly packed (4 x `width` bytes a row).
///
/// Every PNG kind decodes to the same form: 8- and 16-bit samples (16-bit rounded to 8), grey, grey+alpha,
/// palette with tRNS, RGB or grey with a tRNS colour key, 1/2/4-bit, Adam7-interlaced.
public struct OverlayImage: Sendable, Equatable {
    /// Width in pixels (> 0).
    public let width: Int
    /// Height in pixels (> 0).
    public let height: Int
    /// `width * height * 4` bytes, R G B A.
    public let rgba: [UInt8]

    /// - Precondition: `rgba.count == width * height * 4`, `width, height > 0`.
    public init(width: Int, height: Int, rgba: [UInt8]) {
        precondition(width > 0 && height > 0 && rgba.count == width * height * 4, "RGBA size mismatch")
        self.width = width
        self.height = height
        self.rgba = rgba
    }

    /// An image of one colour.
    public init(width: Int, height: Int, filledWith pixel: SIMD4<UInt8>) {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for i in 0..<(width * height) {
            bytes[4 * i] = pixel.x
            bytes[4 * i + 1] = pixel.y
            bytes[4 * i + 2] = pixel.z
            bytes[4 * i + 3] = pixel.w
        }
        self.init(width: width, height: height, rgba: bytes)
    }

    /// The pixel at column `x`, row `y` as (R, G, B, A).
    public subscript(x: Int, y: Int) -> SIMD4<UInt8> {
        let i = 4 * (y * width + x)
        return SIMD4(rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3])
    }

    /// The largest overlay image file read: 64 MiB (see `decode(path:)`).
    public static let maximumFileBytes = Int(WO_MAX_IMAGE_FILE_BYTES)
    /// The largest width or height of an overlay image: 16384 pixels.
    public static let maximumSide = Int(WO_MAX_IMAGE_SIDE)
    /// The most pixels (width x height) of an overlay image: 16777216 (4096x4096).
    public static let maximumPixels = Int(WO_MAX_IMAGE_PIXELS)

    /// Decodes the PNG at `path` (OpenCV `imread(IMREAD_UNCHANGED)`, then normalised).
    ///
    /// Only a regular file is read, never blocking on a FIFO or reading a device, and only up to
    /// `maximumFileBytes`; the size in its header is checked against `maximumSide` and `maximumPixels`
    /// before anything is decoded. (An overlay is cached at 16 bytes a pixel, so a 4096x4096 one takes
    /// 256 MiB; a 30000x30000 PNG can be an 875 KB file.)
    /// - Throws: `OverlayError` `.missing` (exit 66) when the file does not exist, cannot be read or is not a
    ///   regular file, `.notDecodable` (exit 65) when it is not a PNG, is corrupt or truncated, or is over
    ///   the limits.
    public static func decode(path: String) throws -> OverlayImage {
        var handle: OpaquePointer?
        var message = [CChar](repeating: 0, count: 256)
        let status = wo_png_decode(path, &handle, &message, message.count)
        guard status == WO_OK, let handle else {
            let reason = String(cString: message)
            switch status {
            case WO_MISSING, WO_UNREADABLE: throw OverlayError(.missing, subject: path, reason: reason)
            case WO_NOT_DECODABLE, WO_TOO_LARGE: throw OverlayError(.notDecodable, subject: path, reason: reason)
            default: throw OverlayError(.internal, subject: path, reason: reason.isEmpty ? "decoding failed" : reason)
            }
        }
        defer { wo_image_destroy(handle) }
        let w = Int(wo_image_width(handle))
        let h = Int(wo_image_height(handle))
        let bytes = Array(UnsafeBufferPointer(start: wo_image_rgba(handle), count: w * h * 4))
        return OverlayImage(width: w, height: h, rgba: bytes)
    }
}
