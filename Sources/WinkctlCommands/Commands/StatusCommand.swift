import EventServer
import Foundation
import WinkCore
import WinkDaemon

/// `winkctl status [--socket PATH] [--json]`: asks the running winkd for its state (`{"type":"status"}`)
/// and prints it: the socket, the source's state and device or file, the clients connected (this one
/// included) and the frames processed per second; with `--json`, the daemon's `status` line as received. A
/// full daemon (`socket.maximumClients`) refuses the connection but sends its state with the refusal: that
/// is printed, the clients line saying it is full.
/// Exit 0; 69 with one stderr line when no winkd listens (as `winkctl events`); 65 when the daemon does not
/// answer the request (one older than it).
enum StatusCommand {
    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "status",
            summary: "ask the running winkd for its state: source, state, clients, frames per second",
            options: [
                .clientSocket,
                OptionSpec("--json", "print the daemon's status line as received"),
            ]),
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let socket = try args.option("--socket") ?? EventSocketPath.default()
        let asJSON = args.flag("--json")
        try args.finish()
        let answer: (line: String, status: StatusLine, full: String?)
        do {
            answer = try EventClient.askStatus(path: socket)
        } catch let error as EventServerError where error.code == .rejected {
            throw EventServerError(.protocolViolation, subject: socket,
                                   reason: "\(error.reason) (a winkd older than the status request?)")
        }
        print(asJSON ? answer.line : summary(answer.status, socket: socket, full: answer.full))
        return .ok
    }

    /// The readable form: `winkd at SOCKET` and one `name: value` line each for state, source, clients and
    /// frames per second (and the message, when there is one). `full`: the refusal's message when the
    /// daemon was full (its state came with the refusal), said on the clients line.
    static func summary(_ status: StatusLine, socket: String, full: String? = nil) -> String {
        var lines = ["winkd at \(socket)", "  state:   \(status.state.rawValue)"]
        lines.append("  source:  \(status.source ?? "none open")")
        lines.append("  clients: \(status.clients.map(String.init) ?? "?")"
                     + (full.map { " (full: \($0); socket.maximumClients)" } ?? ""))
        lines.append("  fps:     \(status.fps.map { String(format: "%.1f", $0) } ?? "?")")
        if let message = status.message { lines.append("  message: \(message)") }
        return lines.joined(separator: "\n")
    }
}
