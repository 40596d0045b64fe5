import Foundation
import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// What separates words and lines: spaces and tabs, `\n` and `\r\n`, nothing else.
@Suite struct ScenarioLexerTests {
  static let carriageReturn =
    "a carriage return (\\r) inside a line; lines end with \\n or \\r\\n, and words are separated by spaces or tabs"

  @Test func aCarriageReturnInsideALineIsAnError() {
    #expect(
      rendered("devices a\rb\nseed 1") == """
        test.scenario:1:10: error: \(Self.carriageReturn)
        devices a\u{FFFD}b
                 ^
        1 error in test.scenario

        """)
    // In a comment too: it may hide a line that was meant to be read.
    #expect(messages("devices a # note\rseed 2\n") == [Self.carriageReturn])
    // Reported, but the line is still read: nothing else is reported.
    #expect(messages("devices a\nat 1s\ra\u{0B}sync\nat 2s a sync\n") == [Self.carriageReturn])
    // Two before the \n: one ends the line, the other is inside it.
    #expect(messages("devices a\r\r\nseed 1\r\n") == [Self.carriageReturn])
  }

  @Test func verticalTabsAndFormFeedsDoNotSeparateWords() {
    #expect(messages("devices a\u{0B}b") == ["a vertical tab (\\v) cannot separate words; use spaces or tabs"])
    #expect(messages("devices a\u{0C}b") == ["a form feed (\\f) cannot separate words; use spaces or tabs"])
    #expect(messages("devices a\n\u{0C}\nseed 1") == ["a form feed (\\f) cannot separate words; use spaces or tabs"])
    #expect(messages("devices\u{0B}a\u{0C}b") == ["a vertical tab (\\v) cannot separate words; use spaces or tabs"], "one per line")
  }

  @Test func inAStringCarriageReturnsVerticalTabsAndFormFeedsAreText() throws {
    // As in the strings the writer writes: they read back the same.
    let file = try parsed("devices a # page\u{0C}break\u{0B}\nabout \"x\u{0C}y\u{0B}z\rw\"")
    #expect(file.about == "x\u{0C}y\u{0B}z\rw")
    #expect(try parsed(file.rendered()).about == file.about)
    // So a one-line file with a \r only in a string is not taken for \r line endings.
    #expect(messages("about \"x\ry\"") == ["no devices: add a 'devices' line, as in 'devices iPad phone'"])
  }

  @Test func aFileWithCarriageReturnLineEndingsGetsOneClearError() {
    #expect(
      rendered("devices a\rseed 2\rat 1s a sync\r") == """
        test.scenario:1:10: error: the lines of this file end with a lone carriage return (\\r, as on classic Mac OS); scenario files end lines with \\n or \\r\\n: convert its line endings
        devices a\u{FFFD}seed 2\u{FFFD}at 1s a sync
                 ^
        1 error in test.scenario

        """)
    #expect(
      messages("# comment\rdevices a") == [
        "the lines of this file end with a lone carriage return (\\r, as on classic Mac OS); scenario files end lines with \\n or \\r\\n: convert its line endings"
      ])
  }

  @Test func windowsLineEndingsAndAFinalCarriageReturnAreStillAccepted() throws {
    #expect(try parsed("devices a\r\nseed 2\r\n").seed == 2)
    #expect(try parsed("devices a\r\nseed 2\r").seed == 2)
    #expect(try parsed("devices a\r").devices == ["a"])
    #expect(try parsed("devices a\n\r\nseed 3").seed == 3)
  }
}

/// Files are UTF-8: invalid bytes in a string or a word are reported where they are; in a
/// comment they are ignored.
@Suite struct ScenarioUTF8Tests {
  static let inString = "invalid UTF-8 in a string; scenario files are UTF-8 text"
  static let elsewhere = "invalid UTF-8; scenario files are UTF-8 text"

  func bytes(_ parts: [UInt8]...) -> [UInt8] { Array(parts.joined()) }
  func utf8(_ s: String) -> [UInt8] { Array(s.utf8) }

  func failure(_ bytes: [UInt8], source: String = "bad.scenario", sourceLocation: Testing.SourceLocation = #_sourceLocation) -> ScenarioErrors? {
    guard case .failure(let errors) = ScenarioParser.parse(utf8: bytes, source: source) else {
      Issue.record("expected errors", sourceLocation: sourceLocation)
      return nil
    }
    checkPointsIntoTheFile(errors, String(decoding: bytes, as: UTF8.self), source, sourceLocation: sourceLocation)
    return errors
  }

  @Test func invalidUTF8InAStringIsReportedAtItsLineAndColumn() throws {
    // "café" saved as Latin-1.
    let errors = try #require(failure(bytes(utf8("devices a\nabout \"caf"), [0xE9], utf8(" au lait\"\nseed 1\n"))))
    #expect(
      errors.rendered() == """
        bad.scenario:2:11: error: \(Self.inString)
        about "caf\u{FFFD} au lait"
                  ^
        1 error in bad.scenario

        """)
    #expect(errors.diagnostics.map(\.location) == [Loc(line: 2, column: 11)])
  }

  @Test func columnsCountCharactersBeforeTheInvalidBytes() throws {
    // é (two bytes) and 👩‍👩‍👧 (one character) before a truncated sequence.
    let errors = try #require(
      failure(bytes(utf8("devices a\n\nabout \"é👩‍👩‍👧"), [0xE2, 0x82], utf8("x\" # fine\nat 1s a sync\n"))))
    #expect(errors.diagnostics.map(\.message) == [Self.inString])
    #expect(errors.diagnostics.map(\.location) == [Loc(line: 3, column: 10)])
  }

  @Test func invalidUTF8InAWordIsReportedAndTheLineStillRead() throws {
    let errors = try #require(failure(bytes(utf8("devices a caf"), [0xFF], utf8("\nat 1s a sync\n"))))
    #expect(
      errors.diagnostics.map(\.message) == [
        "'caf\u{FFFD}' is not a valid device name: names start with a letter and go on with letters, digits, '_' or '-'", Self.elsewhere,
      ])
    #expect(errors.diagnostics.map(\.location) == [Loc(line: 1, column: 11), Loc(line: 1, column: 14)])
  }

  @Test func invalidUTF8InACommentIsIgnored() throws {
    let file = ScenarioParser.parse(
      utf8: bytes(utf8("# caf"), [0xE9, 0xC0, 0x80], utf8("\ndevices a # "), [0xFF, 0xFE], utf8("\n")), source: "c.scenario")
    #expect(try file.get().devices == ["a"])
  }

  @Test func aReplacementCharacterWrittenInTheFileIsText() throws {
    let file = try ScenarioParser.parse(utf8: utf8("devices a\nabout \"\u{FFFD}\"\n"), source: "r.scenario").get()
    #expect(file.about == "\u{FFFD}")
  }

  @Test func aFileIsReadTheSameFromBytesAsFromText() throws {
    for (name, text) in Fixtures.all + Fixtures.repositoryScenarios() {
      let fromText = ScenarioParser.parse(text, source: name)
      let fromBytes = ScenarioParser.parse(utf8: Array(text.utf8), source: name)
      #expect(fromText == fromBytes, "\(name)")
    }
  }

  @Test func aFileWithInvalidUTF8IsReportedWhenLoaded() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("utf8-\(ProcessInfo.processInfo.processIdentifier).scenario")
    defer { try? FileManager.default.removeItem(at: url) }
    try Data(bytes(utf8("devices a\nabout \"na"), [0xEF, 0xBF], utf8("ve\"\nat 1s a sync\n"))).write(to: url)
    do {
      _ = try Scenario.load(contentsOf: url, source: "naive.scenario")
      Issue.record("expected a diagnostic")
    } catch {
      guard case .invalid(let errors) = error else {
        Issue.record("expected diagnostics, got \(error)")
        return
      }
      #expect(errors.diagnostics.map(\.message) == [Self.inString])
      #expect(errors.diagnostics.map(\.location) == [Loc(line: 2, column: 10)])
    }
  }

  @Test func linesAreDecodedAsStringDecodingDoes() {
    // Each maximal invalid subpart is one U+FFFD, so that columns match the text shown.
    let samples: [[UInt8]] = [
      [0xC3, 0x28], [0xE2, 0x82], [0xF0, 0x90, 0x28], [0xF4, 0x90, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0x80, 0x80],
      [0xFE], [0xF0, 0x9F, 0x98], [0xE0, 0x80, 0xAF], [0xF8, 0x88, 0x80, 0x80, 0x80],
    ]
    for sample in samples {
      var scalars: [Unicode.Scalar] = []
      let line = bytes([0x61], sample, [0x62])
      let decoded = line.withUnsafeBufferPointer { ScenarioInput.decode($0, into: &scalars) }
      let expected = String(decoding: line, as: UTF8.self)
      #expect(decoded.text == expected, "\(sample)")
      #expect(scalars == Array(expected.unicodeScalars), "\(sample)")
      #expect(decoded.firstInvalid == 1, "\(sample)")
    }
  }
}
