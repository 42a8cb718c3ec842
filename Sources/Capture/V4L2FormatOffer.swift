#if canImport(Glibc)
import Glibc
#endif
import WinkCore

/// One frame size a format offers, with the frame intervals offered at it.
public struct V4L2FrameSizeOffer: Hashable, Sendable {
    /// The `VIDIOC_ENUM_FRAMESIZES` entry.
    public var entry: V4L2FrameSizeEntry
    /// The `VIDIOC_ENUM_FRAMEINTERVALS` entries at this size (at the largest size for a stepwise entry);
    /// empty when the driver does not enumerate intervals.
    public var intervals: [V4L2FrameIntervalEntry]

    /// A size entry with the intervals offered at it.
    public init(entry: V4L2FrameSizeEntry, intervals: [V4L2FrameIntervalEntry]) {
        self.entry = entry
        self.intervals = intervals
    }

    /// Whether a rate of at least `framesPerSecond` (within 0.5 fps) is offered; true when the driver
    /// enumerates no intervals, since nothing is known against it.
    public func offers(framesPerSecond: Double) -> Bool {
        guard !intervals.isEmpty else { return true }
        return intervals.contains { interval in
            switch interval {
            case .discrete(let f): f.framesPerSecond >= framesPerSecond - 0.5
            // The shortest interval (`minimum`) is the highest rate.
            case .stepwise(let minimum, _, _): minimum.framesPerSecond >= framesPerSecond - 0.5
            }
        }
    }

    /// Concrete sizes this entry allows: the size itself, or for a stepwise range its largest size and
    /// the common sizes (160x120 ... 1920x1080) on its grid.
    public var candidateSizes: [FrameSize] {
        switch entry {
        case .discrete(let size):
            return [size]
        case .stepwise(let minimum, let maximum, let step):
            let common = [(160, 120), (320, 240), (352, 288), (640, 360), (640, 480), (800, 600), (1280, 720),
                          (1920, 1080)].map { FrameSize(width: $0.0, height: $0.1) }
            let onGrid = common.filter { size in
                size.width >= minimum.width && size.width <= maximum.width && size.height >= minimum.height
                    && size.height <= maximum.height && (size.width - minimum.width) % step.width == 0
                    && (size.height - minimum.height) % step.height == 0
            }
            return onGrid + (onGrid.contains(maximum) ? [] : [maximum])
        }
    }
}

/// A pixel format a device offers, with its frame sizes and rates: what `winkctl cameras` lists and what
/// size negotiation chooses from.
public struct V4L2FormatOffer: Hashable, Sendable {
    /// The `VIDIOC_ENUM_FMT` entry.
    public var format: V4L2FormatEntry
    /// Its frame sizes in the driver's order, each with its intervals (empty when not enumerated).
    public var sizes: [V4L2FrameSizeOffer]

    /// A format with its sizes.
    public init(format: V4L2FormatEntry, sizes: [V4L2FrameSizeOffer]) {
        self.format = format
        self.sizes = sizes
    }

    /// Enumerates every format of an open device (`VIDIOC_ENUM_FMT`), each with its sizes
    /// (`VIDIOC_ENUM_FRAMESIZES`) and intervals (`VIDIOC_ENUM_FRAMEINTERVALS`). A size or interval
    /// enumeration the driver does not support (`ENOTTY`, `EINVAL` at index 0) yields an empty list.
    /// - Throws: `Errno` for any other failure (e.g. `ENODEV`).
    static func enumerate(_ fd: Int32, syscalls: any V4L2Syscalls) throws(Errno) -> [V4L2FormatOffer] {
        var offers: [V4L2FormatOffer] = []
        var index = 0
        while let format = try retryingOnInterrupt({ () throws(Errno) in
            try syscalls.enumerateFormat(fd, index: index)
        }) {
            index += 1
            var sizes: [V4L2FrameSizeOffer] = []
            var sizeIndex = 0
            while let entry = try optionalIoctl({ () throws(Errno) in
                try syscalls.enumerateFrameSize(fd, pixelFormat: format.pixelFormat, index: sizeIndex)
            }) {
                sizeIndex += 1
                let at: FrameSize = switch entry {
                case .discrete(let size): size
                case .stepwise(_, let maximum, _): maximum
                }
                var intervals: [V4L2FrameIntervalEntry] = []
                while let interval = try optionalIoctl({ () throws(Errno) in
                    try syscalls.enumerateFrameInterval(fd, pixelFormat: format.pixelFormat, size: at,
                                                        index: intervals.count)
                }) {
                    intervals.append(interval)
                    if case .stepwise = interval { break }
                }
                sizes.append(V4L2FrameSizeOffer(entry: entry, intervals: intervals))
                if case .stepwise = entry { break }
            }
            offers.append(V4L2FormatOffer(format: format, sizes: sizes))
        }
        return offers
    }
}

/// An optional enumeration ioctl: `ENOTTY` (not implemented by the driver) counts as "no entries".
private func optionalIoctl<T>(_ body: () throws(Errno) -> T?) throws(Errno) -> T? {
    do {
        return try retryingOnInterrupt(body)
    } catch where error.code == ENOTTY {
        return nil
    }
}
