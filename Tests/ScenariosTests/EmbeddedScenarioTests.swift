import Foundation
import Testing
@testable import Scenarios

/// The named scenarios are built into the tool; the built-in copies must be the files.
@Suite struct EmbeddedScenarioTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  func folder() throws -> [(name: String, text: String)] {
    let dir = Self.root.appendingPathComponent("scenarios")
    let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".scenario") }.sorted()
    return try files.map { (String($0.dropLast(".scenario".count)), try String(contentsOf: dir.appendingPathComponent($0), encoding: .utf8)) }
  }

  @Test func theBuiltInScenariosAreTheFilesInScenarios() throws {
    let files = try folder()
    if ProcessInfo.processInfo.environment["RECORD_EMBEDDED"] == "1" {
      try record(files)
      return
    }
    let embedded = EmbeddedScenarios.files
    #expect(embedded.map(\.name) == files.map(\.name), "re-record with: RECORD_EMBEDDED=1 swift test --filter EmbeddedScenarioTests")
    for (a, b) in zip(embedded, files) {
      #expect(a.text == b.text, "\(a.name) differs from scenarios/\(b.name).scenario; re-record with: RECORD_EMBEDDED=1 swift test --filter EmbeddedScenarioTests")
    }
  }

  @Test func everyBuiltInScenarioParses() {
    for (name, text) in EmbeddedScenarios.files {
      if case .failure(let errors) = Scenario.parse(text, source: name) { Issue.record("\(errors.rendered())") }
    }
  }

  func record(_ files: [(name: String, text: String)]) throws {
    var out = """
      // Generated from scenarios/*.scenario by `RECORD_EMBEDDED=1 swift test --filter EmbeddedScenarioTests`;
      // a test fails when it and the folder disagree. Do not edit by hand.

      /// The named scenarios, built into the tool so that `sim-cli run NAME` works wherever the
      /// binary is, even without the repository's `scenarios/` folder next to it.
      enum EmbeddedScenarios {
        static let files: [(name: String, text: String)] = [

      """
    for (name, text) in files {
      precondition(!text.contains("\"\"\"##"), "\(name) contains the literal's delimiter")
      var body = text
      while body.hasSuffix("\n") { body.removeLast() }
      out += "    (\"\(name)\", ##\"\"\"\n\(body)\n\"\"\"## + \"\\n\"),\n"
    }
    out += "  ]\n}\n"
    try out.write(to: Self.root.appendingPathComponent("Sources/Scenarios/EmbeddedScenarios.swift"), atomically: true, encoding: .utf8)
  }
}
