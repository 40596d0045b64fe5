import Foundation
import SimCLI

/// Runs the CLI in-process and returns what it printed.
func runCLI(_ arguments: String...) -> (code: ExitCode, stdout: String, stderr: String) {
  let (console, captured) = Console.capturing()
  let code = SimCLI.main(arguments: arguments, console: console)
  return (code, captured.stdout, captured.stderr)
}

/// The `sim-cli` binary that `swift test` built next to the test bundle.
func builtBinary() throws -> URL {
  let candidates = [
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
    Bundle.main.bundleURL,
    Bundle.main.bundleURL.deletingLastPathComponent(),
  ]
  for folder in candidates {
    let url = folder.appendingPathComponent("sim-cli")
    if FileManager.default.isExecutableFile(atPath: url.path) { return url }
  }
  struct NotFound: Error, CustomStringConvertible {
    var description: String { "sim-cli was not found next to the test bundle" }
  }
  throw NotFound()
}

/// Runs the built binary in a new process.
func runProcess(_ arguments: [String], environment: [String: String]? = nil) throws -> (code: Int32, stdout: String, stderr: String) {
  let process = Process()
  process.executableURL = try builtBinary()
  process.arguments = arguments
  if let environment { process.environment = environment }
  let out = Pipe()
  let err = Pipe()
  process.standardOutput = out
  process.standardError = err
  try process.run()
  let outData = out.fileHandleForReading.readDataToEndOfFile()
  let errData = err.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}
