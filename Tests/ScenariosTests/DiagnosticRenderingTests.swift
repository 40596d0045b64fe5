import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// A rendered diagnostic is small and safe to print, whatever the file: long lines are cut
/// around the caret, long messages are cut, and control characters never reach the terminal.
@Suite struct DiagnosticRenderingTests {
  func diagnostic(_ line: String, column: Int, message: String = "bad", source: String = "f.scenario") -> Diagnostic {
    Diagnostic(source: source, location: SourceLocation(line: 1, column: column), message: message, lineText: line)
  }

  @Test func aLongLineIsCutAroundTheCaret() {
    let line = String(repeating: "a", count: 400) + "B" + String(repeating: "c", count: 599_600)
    #expect(
      diagnostic(line, column: 401).rendered()
        == "f.scenario:1:401: error: bad\n" + "…" + String(repeating: "a", count: 100) + "B" + String(repeating: "c", count: 99) + "…\n"
        + " " + String(repeating: " ", count: 100) + "^\n")
  }

  @Test func theStartOfALongLineIsShownWithoutALeadingMark() {
    let line = "seed " + String(repeating: "9", count: 1_000_000)
    #expect(
      diagnostic(line, column: 6).rendered()
        == "f.scenario:1:6: error: bad\n" + "seed " + String(repeating: "9", count: 195) + "…\n" + "     ^\n")
  }

  @Test func theEndOfALongLineIsShownWithoutATrailingMark() {
    let line = String(repeating: "x", count: 1_000) + "yz"
    // Column 1004: just past the end, where a missing word is reported.
    #expect(
      diagnostic(line, column: 1_004).rendered()
        == "f.scenario:1:1004: error: bad\n" + "…" + String(repeating: "x", count: 97) + "yz\n" + " " + String(repeating: " ", count: 100) + "^\n")
  }

  @Test func aLineOfTwoHundredCharactersIsNotCut() {
    let line = String(repeating: "a", count: 200)
    #expect(diagnostic(line, column: 200).rendered() == "f.scenario:1:200: error: bad\n" + line + "\n" + String(repeating: " ", count: 199) + "^\n")
  }

  @Test func tabsInTheShownPartStillLineUpTheCaret() {
    let line = String(repeating: "a", count: 500) + "\t\tX" + String(repeating: "b", count: 500)
    let rendered = diagnostic(line, column: 503).rendered()
    let shown = rendered.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(shown[1] == "…" + String(repeating: "a", count: 98) + "\t\tX" + String(repeating: "b", count: 99) + "…")
    #expect(shown[2] == " " + String(repeating: " ", count: 98) + "\t\t^")
  }

  @Test func aCaretFarPastTheEndIsNotPaddedWithMegabytesOfSpaces() {
    #expect(diagnostic("ab", column: 5_000_000).rendered().utf8.count < 1_000)
  }

  @Test func aLongMessageIsCut() {
    let message = "unknown device 'x'; the devices are " + String(repeating: "d", count: 2_000_000)
    let rendered = diagnostic("at 1s x sync", column: 7, message: message).rendered()
    #expect(rendered.utf8.count < 1_500)
    #expect(rendered.hasPrefix("f.scenario:1:7: error: unknown device 'x'; the devices are ddd"))
    #expect(rendered.contains("d…\nat 1s x sync\n      ^\n"))
  }

  @Test func controlCharactersBidiOverridesAndHugeClustersAreNotPrinted() {
    let line = "a\u{1B}[2J\u{202E}b\u{2066}" + String(repeating: "\u{301}", count: 100_000) + "c"
    let rendered = diagnostic(line, column: 8, message: "m\u{7}\u{202E}").rendered()
    #expect(rendered == "f.scenario:1:8: error: m\u{FFFD}\u{FFFD}\na\u{FFFD}[2J\u{FFFD}b\u{FFFD}\u{FFFD}c\n       ^\n")
  }

  @Test func theSourceIsPrintableToo() {
    #expect(
      diagnostic("x", column: 1, source: "a\u{1B}]0;pwned\u{7}.scenario").rendered().hasPrefix("a\u{FFFD}]0;pwned\u{FFFD}.scenario:1:1: error: "))
    let errors = ScenarioErrors(diagnostics: [], source: "b\u{1B}.scenario")
    #expect(errors.rendered() == "0 errors in b\u{FFFD}.scenario\n")
  }

  @Test func fiveErrorsOnMegabyteLinesPrintAFewKilobytes() {
    let long = String(repeating: "x", count: 1_000_000)
    let text = "devices a\n" + (1...5).map { "at 1s a set n\($0) f=\"\(long)\"" }.joined(separator: "\n")
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "big.scenario") else {
      Issue.record("expected errors")
      return
    }
    #expect(errors.diagnostics.count == 5)
    #expect(errors.rendered().utf8.count < 5 * 1_000)
    checkPointsIntoTheFile(errors, text, "big.scenario")
  }

  @Test func aMegabyteOfNULsPrintsLittle() {
    let text = "devices a\n" + String(repeating: "\u{0}", count: 1_000_000)
    guard case .failure(let errors) = ScenarioParser.parse(text, source: "nul.scenario") else {
      Issue.record("expected errors")
      return
    }
    #expect(errors.rendered().utf8.count < 2_000)
    #expect(!errors.rendered().unicodeScalars.contains("\u{0}"))
  }
}
