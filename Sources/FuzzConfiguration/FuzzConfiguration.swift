// Fuzz target for winkd's configuration parser: arbitrary bytes as a configuration file through
// `Configuration.parse(_:path:)`, which must return a configuration or throw `Configuration.Invalid`.
//
// Fuzzing build (`main` hands over to libFuzzer through LLVMFuzzerRunDriver; see the README):
//   swift build -c release --scratch-path .build/fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -DWINK_FUZZ \
// --product FuzzConfiguration && .build/fuzz/release/FuzzConfiguration -max_total_time=60 Tests/Fuzz/Configuration
// Normal build: a driver that replays files or directories of inputs through the same function.
import Foundation
import FuzzSupport
import WinkDaemon

/// One input: parsed as a whole file. Anything thrown but `Configuration.Invalid`, an `Invalid` with no
/// problem, or a problem that spans lines (each must be one line, COMMON rules) traps.
@inline(never)
func fuzzOne(_ input: UnsafeRawBufferPointer) {
    do {
        _ = try Configuration.parse(Data(input), path: "fuzz.json")
    } catch let invalid as Configuration.Invalid {
        precondition(!invalid.problems.isEmpty, "Invalid with no problem")
        // What a person sees (exit 78's stderr) is one line per problem.
        precondition(
            invalid.description.split(separator: "\n", omittingEmptySubsequences: false).count
                == invalid.problems.count, "a problem spans lines")
    } catch {
        preconditionFailure("unexpected error type: \(error)")
    }
}

@main
enum Driver {
    static func main() { FuzzDriver.run(name: "FuzzConfiguration", fuzzOne) }
}
