extension V4L2Camera {
    /// Picks the capture size from the formats the camera itself offers (libv4l2 converts at the same size).
    ///
    /// With `settings.width`/`height` set: that size when offered, else the offered size nearest to it
    /// (smallest |dw| + |dh|), preferring sizes that reach `framesPerSecond`. Otherwise: the largest size
    /// (by area) within `maximumWidth` x `maximumHeight` that reaches `framesPerSecond`; failing that the
    /// largest within the bounds at any rate; failing that the smallest offered. A device that enumerates
    /// no sizes gets the requested (or maximum) size, for the driver to adjust in `VIDIOC_S_FMT`.
    static func chooseSize(_ offers: [V4L2FormatOffer], settings: Settings) -> FrameSize {
        let fps = settings.framesPerSecond
        var candidates: [(size: FrameSize, fast: Bool)] = []
        for offer in offers {
            for sizeOffer in offer.sizes {
                let fast = sizeOffer.offers(framesPerSecond: fps)
                for size in sizeOffer.candidateSizes { candidates.append((size, fast)) }
            }
        }
        if let width = settings.width, let height = settings.height {
            func distance(_ s: FrameSize) -> Int { abs(s.width - width) + abs(s.height - height) }
            let best = candidates.min { a, b in
                (distance(a.size), a.fast ? 0 : 1) < (distance(b.size), b.fast ? 0 : 1)
            }
            return best?.size ?? FrameSize(width: width, height: height)
        }
        func area(_ s: FrameSize) -> Int { s.width * s.height }
        let fitting = candidates.filter {
            $0.size.width <= settings.maximumWidth && $0.size.height <= settings.maximumHeight
        }
        if let best = fitting.filter(\.fast).max(by: { area($0.size) < area($1.size) }) { return best.size }
        if let best = fitting.max(by: { area($0.size) < area($1.size) }) { return best.size }
        if let smallest = candidates.min(by: { area($0.size) < area($1.size) }) { return smallest.size }
        return FrameSize(width: settings.maximumWidth, height: settings.maximumHeight)
    }
}
