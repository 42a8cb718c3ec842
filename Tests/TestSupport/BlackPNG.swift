import Foundation

/// A valid 8-bit greyscale PNG of black pixels, of any declared size, built without zlib: its deflate
/// stream is one fixed-Huffman block (RFC 1951 3.2.6) holding one literal 0 and then 258-byte copies at
/// distance 1 (13 bits each), so a 30000x30000 image (900 MB of pixels) is a 5.7 MB file.
public enum BlackPNG {
    /// The PNG file's bytes.
    public static func data(width: Int, height: Int) -> Data {
        let raw = height * (width + 1)  // a filter byte (0) before each row
        var zlib: [UInt8] = [0x78, 0x01]
        var bits: UInt64 = 0, count = 0
        func put(_ value: UInt64, _ n: Int) {
            bits |= value << UInt64(count)
            count += n
            while count >= 8 {
                zlib.append(UInt8(truncatingIfNeeded: bits))
                bits >>= 8
                count -= 8
            }
        }
        // Huffman codes go most significant bit first: these are the fixed codes reversed.
        let literalZero: UInt64 = 0x0C  // 00110000, 8 bits
        let length258: UInt64 = 0xA3  // 11000101, 8 bits; distance code 0 (5 zero bits) follows
        put(0b011, 3)  // BFINAL 1, BTYPE 01 (fixed Huffman)
        put(literalZero, 8)
        var left = raw - 1
        zlib.reserveCapacity(left / 258 * 13 / 8 + 64)
        while left >= 258 {
            put(length258, 13)
            left -= 258
        }
        for _ in 0..<left { put(literalZero, 8) }
        put(0, 7)  // end of block
        if count > 0 { put(0, 8 - count) }
        let adler = UInt32(raw % 65521) << 16 | 1  // Adler-32 of zeros: a = 1, b = n mod 65521
        zlib += bigEndian(adler)
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 0, 0, 0, 0]  // 8-bit, greyscale, deflate, adaptive filters, not interlaced
        var png: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]
        png += chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", [])
        return Data(png)
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 255), UInt8(v >> 8 & 255), UInt8(v & 255)]
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        bytes.withUnsafeBufferPointer { p in
            for b in p { crc = table[Int((crc ^ UInt32(b)) & 255)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
