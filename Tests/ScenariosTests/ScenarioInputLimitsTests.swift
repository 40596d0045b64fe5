import Foundation
import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// Memory stays proportional to the file, and files beyond the size limit are refused with a
/// diagnostic. Memory is checked indirectly: no line keeps storage sized by another line.
@Suite struct ScenarioInputLimitsTests {
  /// Every array a lexed line keeps: (count, capacity).
  static func arrays(of line: ScenarioLine) -> [(count: Int, capacity: Int)] {
    [(line.tokens.count, line.tokens.capacity)]
      + [line._characterIndex, line._utf8Offset].compactMap { $0.map { ($0.count, $0.capacity) } }
  }

  static func checkCapacities(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
    let session = ScenarioParse(source: "t.scenario", text: text)
    _ = session.run()
    var offenders: [String] = []
    for line in session.lines {
      for (count, capacity) in arrays(of: line) where capacity > max(2 * count, count + 16) {
        offenders.append("line \(line.number): \(count) elements, capacity \(capacity)")
      }
    }
    #expect(offenders.isEmpty, "\(offenders.count) arrays too large, e.g. \(offenders.prefix(3))", sourceLocation: sourceLocation)
  }

  @Test func aLongLineDoesNotInflateTheLinesAfterIt() {
    // The 502 kB file that took 2 GB: a long comment, then many empty lines.
    Self.checkCapacities("devices a\n#" + String(repeating: "x", count: 2_000) + "\n" + String(repeating: "\n", count: 2_000))
    // The same with \r\n endings and with statements after the long line.
    Self.checkCapacities("devices a\r\n#" + String(repeating: "x", count: 2_000) + "\r\n" + String(repeating: "seed 1\r\n", count: 500))
    // Non-ASCII lines keep character and UTF-8 maps: sized by their own line too.
    Self.checkCapacities("devices a\n# " + String(repeating: "é", count: 2_000) + "\n" + String(repeating: "seed 1 # ü\n", count: 500))
  }

  @Test func aFileOfHalfAMillionEmptyLinesIsCheap() {
    let text = "devices a\n#" + String(repeating: "x", count: 2_000) + "\n" + String(repeating: "\n", count: 500_000)
    let session = ScenarioParse(source: "t.scenario", text: text)
    guard case .success = session.run() else {
      Issue.record("expected the file to parse")
      return
    }
    // Blank and comment-only lines are not kept: nothing refers to them.
    #expect(session.lines.count <= 2)
  }

  // MARK: - The size limit

  @Test func textBeyondSixteenMebibytesIsRefusedWithOneDiagnostic() {
    let limit = 16 * 1_024 * 1_024
    let text = "devices a\n#" + String(repeating: "x", count: limit - 11) + "\n"
    #expect(text.utf8.count == limit + 1)
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "big.scenario") else {
      Issue.record("expected the size limit")
      return
    }
    #expect(errors.diagnostics.map(\.message) == ["the file is 16.8 MB (16777217 bytes); scenario files are limited to 16 MiB (16777216 bytes)"])
    #expect(errors.diagnostics.map(\.location) == [Loc(line: 1, column: 1)])
    #expect(errors.rendered().hasPrefix("big.scenario:1:1: error: the file is 16.8 MB"))
    #expect(errors.diagnostics.first?.lineText == "devices a")
  }

  @Test func textOfExactlySixteenMebibytesIsRead() throws {
    let limit = 16 * 1_024 * 1_024
    let text = "devices a\n#" + String(repeating: "x", count: limit - 12) + "\n"
    #expect(text.utf8.count == limit)
    #expect(try parsed(text).devices == ["a"])
  }

  @Test func aFileBeyondTheLimitIsRefusedWhenLoaded() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("limit-\(ProcessInfo.processInfo.processIdentifier).scenario")
    defer { try? FileManager.default.removeItem(at: url) }
    let size = 17_200_000
    var bytes = Array("devices a\n# ".utf8)
    bytes += [UInt8](repeating: UInt8(ascii: "x"), count: size - bytes.count)
    try Data(bytes).write(to: url)
    do {
      _ = try Scenario.load(contentsOf: url, source: "huge.scenario")
      Issue.record("expected the size limit")
    } catch {
      guard case .invalid(let errors) = error else {
        Issue.record("expected diagnostics, got \(error)")
        return
      }
      #expect(
        errors.rendered() == """
          huge.scenario:1:1: error: the file is 17.2 MB (17200000 bytes); scenario files are limited to 16 MiB (16777216 bytes)
          devices a
          ^
          1 error in huge.scenario

          """)
    }
  }
}
