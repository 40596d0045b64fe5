import Foundation
import Testing

@testable import Scenarios

/// `docs/scenario-format.md` shows what the parser does: its examples parse, its sample
/// diagnostics are what the parser prints.
@Suite struct ScenarioReferenceTests {
  static func codeBlocks(filePath: String = #filePath) throws -> [String] {
    let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let data = try #require(FileManager.default.contents(atPath: root.appendingPathComponent("docs/scenario-format.md").path))
    // The text of each fenced block (```, ```scenario, ```text…), each line ending with "\n".
    var blocks: [String] = []
    var open: String?
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("```") {
        if let body = open { blocks.append(body) }
        open = open == nil ? "" : nil
      } else if let body = open {
        open = body + line + "\n"
      }
    }
    return blocks
  }

  @Test func theReferenceExampleIsTheSpecExample() throws {
    let blocks = try Self.codeBlocks()
    #expect(blocks.first == Fixtures.twoDeviceAcceptance.replacingOccurrences(of: "\n\n\n", with: "\n"))
    #expect(try parsed(blocks[0]).withoutLocations == parsed(Fixtures.twoDeviceAcceptance).withoutLocations)
  }

  @Test func theReferenceHeaderSchemaTimelineAndExpectationExamplesParseTogether() throws {
    let blocks = try Self.codeBlocks()
    let header = try #require(blocks.first { $0.hasPrefix("scenario offline-edit-race") })
    let schema = try #require(blocks.first { $0.hasPrefix("type Note\n") })
    let timeline = try #require(blocks.first { $0.hasPrefix("at 0s ") })
    let expectations = try #require(blocks.first { $0.hasPrefix("expect no violations\nexpect no lost-edit") })
    let file = try parsed(header + schema + timeline + expectations)
    #expect(file.timeline.count == 15)
    #expect(file.expectations.count == 10)
  }

  @Test func theReferenceSampleDiagnosticsAreWhatTheParserPrints() throws {
    let text = """
      devices iPad phone
      type Note
        title: string = "" mutable
        body: text = ""
      type Stroke append-only
        points: string = ""
      at 0s iPad create Note n1
      at 0s phone create Stroke s1
      at 1s ipad sync
      at 2s sync
      at 2s offline iPad
      at 3s   phone  set s1 points="c"
      at 3s sync
      at 4s iPad set n1 title=Genesis
      """
    let sample = try #require(try Self.codeBlocks().first { $0.hasPrefix("scenarios/race.scenario:") })
    #expect(rendered(text, source: "scenarios/race.scenario") == sample)
  }
}
