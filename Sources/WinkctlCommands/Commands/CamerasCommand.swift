import Capture
import Foundation
import WinkCore
import WinkDaemon

/// `winkctl cameras`: lists the V4L2 capture devices with their formats, sizes and frame rates.
/// Prints "no V4L2 capture devices found" and exits 0 when there are none.
enum CamerasCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "cameras", summary: "list the V4L2 capture devices with their formats, sizes and frame rates",
            options: []),
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        try args.finish()
        let text = V4L2Discovery.listing(V4L2Discovery.captureDevices())
        if let failure = writeAll(text, to: STDOUT_FILENO), failure != EPIPE {
            throw StandardOutputError(code: failure)
        }
        return .ok
    }
}
