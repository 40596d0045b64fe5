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
