// Fuzz target for the event socket's request side: bytes as a client would send them, cut into chunks,
// through `LineSplitter` and each complete line through `ClientMessage.parse`.
//
// Fuzzing build (`main` hands over to libFuzzer through LLVMFuzzerRunDriver; see the README):
//   swift build -c release --scratch-path .build/fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -DWINK_FUZZ \
//       --product FuzzClientLine && .build/fuzz/release/FuzzClientLine -max_total_time=60 Tests/Fuzz/ClientLine
// Normal build: a driver that replays files or directories of inputs (a corpus, a crash) through the same
// function, so `swift build` links and a found crash stays reproducible without the fuzzer.
import EventServer
import Foundation
import FuzzSupport

/// One input: the first byte picks the chunk size (1...256) the rest is fed in, like short `read(2)`s.
/// Checks the splitter's contract as it goes; a broken contract traps, which the fuzzer reports.
@inline(never)
func fuzzOne(_ input: UnsafeRawBufferPointer) {
    guard let first = input.first else { return }
    let chunk = Int(first) + 1
    let body = input.dropFirst()
    var splitter = LineSplitter(maximumLineBytes: 512)
    var ended = false
    var start = body.startIndex
    while start < body.endIndex {
        let end = min(start + chunk, body.endIndex)
        for item in splitter.append(body[start..<end]) {
            precondition(!ended, "an item after .tooLong")
            switch item {
            case .line(let line):
                precondition(!line.isEmpty && line.count <= 512 && !line.contains(0x0A), "bad line \(line.count)")
                if let message = try? ClientMessage.parse(line) {
                    if case .subscribe(_, let events, _, _) = message { _ = events?.count }
                }
            case .tooLong:
                ended = true
            }
        }
        start = end
    }
    precondition(splitter.pendingByteCount <= 513, "buffered past the limit")
}

@main
enum Driver {
    static func main() { FuzzDriver.run(name: "FuzzClientLine", fuzzOne) }
}
