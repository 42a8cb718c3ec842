/// Where frames go when they are written out: a video file (Capture's `VideoFileWriter`, Overlay's
/// `OverlayVideoWriter`), frame by frame at one size. Not thread-safe.
public protocol FrameSink: AnyObject {
    /// Frames written so far.
    var frameCount: Int { get }
    /// Appends the BGR plane of `buffer` (the sink's size).
    /// - Throws: the sink's error (with its exit code) for a frame of another size or a failed write.
    func write(_ buffer: PixelBuffer) throws
    /// Appends `buffer` shown at `time` seconds from the first frame (the input frame's own time). Sinks of
    /// a constant rate ignore the time (the default).
    func write(_ buffer: PixelBuffer, time: Double) throws
    /// Finishes the output and proves it whole; the output is complete only when this returns.
    /// - Throws: the sink's error for a failed write; the incomplete output is then removed.
    func finish() throws
    /// Releases the output without finishing it (after an error elsewhere). Idempotent.
    func close()
}

extension FrameSink {
    /// Ignores `time` (seconds) and writes `buffer` as the next frame at the sink's constant rate.
    /// - Throws: as `write(_:)`.
    public func write(_ buffer: PixelBuffer, time: Double) throws { try write(buffer) }
}
