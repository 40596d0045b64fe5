import Foundation
import SimTesting
import Testing

/// The README's "Assert it in your tests" section shows what these tests do: its helper calls
/// and its policy are the ones the tests use, its sample failure is what the helper records.
@Suite struct ReadmeExampleTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// The section's fenced blocks: (language, lines).
  static func blocks() throws -> [(language: String, lines: [String])] {
    let data = try #require(FileManager.default.contents(atPath: root.appendingPathComponent("README.md").path))
    let text = String(decoding: data, as: UTF8.self)
    let start = try #require(text.range(of: "## Assert it in your tests\n"))
    let rest = text[start.upperBound...]
    let section = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
    var result: [(String, [String])] = []
    var current: (String, [String])?
    for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("```") {
        if let block = current {
          result.append(block)
          current = nil
        } else {
          current = (String(line.dropFirst(3)), [])
        }
      } else if current != nil {
        current!.1.append(String(line))
      }
    }
    return result
  }

  @Test func everyHelperCallAndPolicyLineInTheReadmeIsOneTheseTestsUse() throws {
    let folder = Self.root.appendingPathComponent("Tests/SimTestingTests")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
    var testLines: [String] = []
    for file in files {
      let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
      testLines += text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    }
    let markers = [
      "expectNoViolations(", "expectFuzzPasses(", "XCTAssertNoViolations(", "XCTAssertFuzzPasses(", "SyncPolicy",
      "StandardPolicy(", "base.", "var name", "var settings", "var tracksVersions",
    ]
    let swift = try Self.blocks().filter { $0.language == "swift" && !$0.lines.contains("// Package.swift") }
    let shown = swift.flatMap(\.lines).map { $0.trimmingCharacters(in: .whitespaces) }.filter { line in
      markers.contains { line.contains($0) }
    }
    #expect(shown.count >= 10)
    for line in shown {
      #expect(testLines.contains(line), "the README shows `\(line)`, which no test in Tests/SimTestingTests uses")
    }
  }

  @Test func theReadmeSampleFailureIsWhatTheHelperRecords() throws {
    let log = IssueLog()
    withKnownIssue("fat-note-lww loses an edit on purpose: the README shows this failure") {
      expectNoViolations(scenario: "fat-note-lww")
    } matching: {
      log.matcher($0)
    }
    let message = try #require(log.messages.first)
    let sample = try #require(Self.blocks().first { $0.language.isEmpty })
    let messageLines = message.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    for line in sample.lines where !line.isEmpty {
      if let cut = line.range(of: "…") {
        let prefix = String(line[..<cut.lowerBound])
        #expect(prefix.trimmingCharacters(in: .whitespaces).isEmpty || messageLines.contains { $0.hasPrefix(prefix) }, "\(line)")
      } else {
        #expect(messageLines.contains(line), "the README's sample shows `\(line)`, which the message does not have")
      }
    }
  }
}
