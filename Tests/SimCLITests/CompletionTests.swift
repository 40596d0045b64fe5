import Foundation
import Scenarios
import Testing

@testable import SimCLI

/// `sim-cli completion SHELL` covers the commands, their options, the presets and the named
/// scenarios, and each script is valid syntax for its shell (checked with `SHELL -n` when that
/// shell is installed).
@Suite struct CompletionTests {
  @Test(arguments: ["bash", "zsh", "fish"])
  func theScriptCoversEverythingAndParses(shell: String) throws {
    let r = runCLI("completion", shell)
    #expect(r.code == .success, "\(r.stderr)")
    for word in [
      "run", "fuzz", "compare", "explain", "report", "--minimize-to", "--timeline", "--shard", "--html", "--timings", "cloudkit-default",
      "append-only",
      "fat-note-lww",
    ] {
      // fish names a long option `-l minimize-to`.
      let spelled = shell == "fish" && word.hasPrefix("--") ? "-l " + word.dropFirst(2) : word
      #expect(r.stdout.contains(spelled), "the \(shell) script lacks \(spelled)")
    }
    let path = "/usr/bin/\(shell)"
    guard FileManager.default.isExecutableFile(atPath: path) else { return }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("completion-\(getpid()).\(shell)")
    try r.stdout.write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = ["-n", file.path]
    let err = Pipe()
    process.standardError = err
    try process.run()
    process.waitUntilExit()
    let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(process.terminationStatus == 0, "\(shell) -n: \(message)")
  }

  @Test func anUnknownShellIsAUsageErrorWithASuggestion() {
    let r = runCLI("completion", "zhs")
    #expect(r.code == .usage)
    #expect(r.stderr.contains("zsh"))
  }
}
