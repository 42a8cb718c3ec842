import EventServer
import Foundation
import Testing

/// A unit file read the way systemd.syntax(5) describes it: `[Section]` headers, `Key=value` lines, `#`/`;`
/// comments; a key given twice keeps both values, in order.
struct UnitFile {
    let name: String
    let text: String
    private(set) var sections: [String: [String: [String]]] = [:]

    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("systemd")

    init(_ name: String) throws {
        self.name = name
        text = try String(contentsOf: Self.directory.appendingPathComponent(name), encoding: .utf8)
        var section = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals]), value = String(line[line.index(after: equals)...])
            sections[section, default: [:]][key, default: []].append(value)
        }
    }

    /// Every value of `key` in `section`.
    func values(_ section: String, _ key: String) -> [String] { sections[section]?[key] ?? [] }
    /// The last value of `key` (the one systemd uses for single-valued settings).
    func value(_ section: String, _ key: String) -> String? { values(section, key).last }
    /// Space-separated words across every value of `key`.
    func words(_ section: String, _ key: String) -> [String] {
        values(section, key).flatMap { $0.split(separator: " ").map(String.init) }
    }
}

struct SystemdUnitFileTests {
    static let services = ["winkd.service", "winkd-system.service"]

    @Test(arguments: services) func serviceIsNotifyWithWatchdogAndNoRestartOnUsageOrConfigErrors(name: String) throws {
        let unit = try UnitFile(name)
        #expect(unit.value("Service", "Type") == "notify")
        let watchdog = try #require(unit.value("Service", "WatchdogSec"))
        #expect(watchdog.hasSuffix("s") && Int(watchdog.dropLast()).map { $0 >= 5 } == true)
        let noRestart = unit.words("Service", "RestartPreventExitStatus")
        #expect(noRestart.contains("64") && noRestart.contains("78"))
        #expect(unit.value("Service", "Restart") == "on-failure")
        #expect(unit.value("Service", "ExecStart")?.hasPrefix("/usr/local/bin/winkd ") == true)
    }

    /// Issue 15: `systemctl reload` sends winkd the SIGHUP it reloads on.
    @Test(arguments: services) func reloadSendsSIGHUPToWinkd(name: String) throws {
        let unit = try UnitFile(name)
        #expect(unit.value("Service", "ExecReload") == "/bin/kill -HUP $MAINPID")
    }

    @Test(arguments: services) func serviceLetsTheCameraInAndLittleElse(name: String) throws {
        let unit = try UnitFile(name)
        #expect(unit.values("Service", "DeviceAllow").contains("char-video4linux rw"))
        #expect(unit.value("Service", "DevicePolicy") == "closed")
        // PrivateDevices=yes would hide /dev/video*.
        #expect(unit.value("Service", "PrivateDevices") != "yes")
        for key in ["NoNewPrivileges", "PrivateNetwork", "MemoryDenyWriteExecute", "LockPersonality",
                    "RestrictNamespaces", "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs",
                    "ProtectControlGroups", "ProtectClock", "RestrictRealtime", "RestrictSUIDSGID"] {
            #expect(unit.value("Service", key) == "yes", "\(name): \(key)")
        }
        #expect(unit.value("Service", "ProtectSystem") == "strict")
        #expect(unit.value("Service", "RestrictAddressFamilies") == "AF_UNIX")
        #expect(unit.value("Service", "CapabilityBoundingSet") == "")
        #expect(unit.value("Service", "ProtectProc") == "invisible")
        #expect(unit.value("Service", "UMask") == "0077")
        #expect(unit.values("Service", "SystemCallFilter").first == "@system-service")
    }

    @Test func userUnitsServeTheRuntimeDirectorySocket() throws {
        let service = try UnitFile("winkd.service"), socket = try UnitFile("winkd.socket")
        #expect(socket.value("Socket", "ListenStream") == "%t/winkd/events.sock")
        #expect(socket.value("Socket", "SocketMode") == "0600")
        #expect(service.value("Service", "ExecStart")?.hasSuffix("--socket %t/winkd/events.sock") == true)
        #expect(service.value("Service", "RuntimeDirectory") == "winkd")
        // The socket unit's file lives in that directory: removing it on stop would break activation.
        #expect(service.value("Service", "RuntimeDirectoryPreserve") == "yes")
        #expect(service.value("Install", "WantedBy") == "default.target")
    }

    @Test func systemUnitsServeAGroupOwnedSocket() throws {
        let service = try UnitFile("winkd-system.service"), socket = try UnitFile("winkd-system.socket")
        #expect(socket.value("Socket", "ListenStream") == EventSocketPath.systemPath)
        #expect(socket.value("Socket", "SocketMode") == "0660")
        #expect(socket.value("Socket", "SocketGroup") == "winkd")
        #expect(socket.value("Socket", "Service") == "winkd-system.service")
        #expect(service.value("Service", "ExecStart")?.hasSuffix("--socket \(EventSocketPath.systemPath)") == true)
        #expect(service.value("Service", "User") == "winkd" && service.value("Service", "Group") == "winkd")
        #expect(service.words("Service", "SupplementaryGroups") == ["video"])
        #expect(service.words("Unit", "Requires").contains("winkd-system.socket"))
        #expect(service.value("Service", "ProtectHome") == "yes")
        let sysusers = try String(contentsOf: UnitFile.directory.appendingPathComponent("sysusers.d/winkd.conf"),
                                  encoding: .utf8)
        let entries = sysusers.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
        #expect(entries.contains("u winkd -") && entries.contains("m winkd video"))
    }

    @Test(arguments: services + ["winkd.socket", "winkd-system.socket", "sysusers.d/winkd.conf"])
    func everyFileSaysHowToInstallIt(name: String) throws {
        let header = try UnitFile(name).text.split(separator: "\n").prefix { $0.hasPrefix("#") }
        #expect(header.contains { $0.contains("Install") }, "\(name) has no install comment")
    }

    /// systemd's own rating; skipped where systemd-analyze is not installed.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")))
    func systemServiceRatesSafe() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        process.arguments = ["security", "--offline=true", "--no-pager",
                             UnitFile.directory.appendingPathComponent("winkd-system.service").path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let line = try #require(output.split(separator: "\n").first { $0.contains("Overall exposure level") })
        let score = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) })
        #expect(score <= 2.0, "\(line)")
    }
}
