import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// `check --format json`: each diagnostic's file, line, column, message and suggestion, apart.
@Suite struct DiagnosticJSONTests {
  func errors(_ text: String, source: String = "test.scenario") -> ScenarioErrors? {
    guard case .failure(let errors) = ScenarioParser.parse(text, source: source) else { return nil }
    return errors
  }

  @Test func aSuggestionIsKeptApartAndTheMessageIsUnchanged() throws {
    let d = try #require(errors(withLine("at 1s ipad sync"))?.diagnostics.first)
    #expect(d.message == "unknown device 'ipad'; did you mean 'iPad'?")
    #expect(d.suggestion == "iPad")
    #expect(d.rendered().hasPrefix("test.scenario:7:7: error: unknown device 'ipad'; did you mean 'iPad'?\n"))
  }

  @Test(arguments: [
    ("polcy crdt", "policy"), ("policy crdt winner=clok", "clock"), ("policy cloudkit-defualt", "cloudkit-default"),
    ("at 1s iPad clock 2sec", "s"), ("at 1s snyc", "sync"), ("expect n1.titel == \"x\"", "title"), ("expect converge", "converged"),
    ("  extra: strin", "string"), ("at 1s iPad delete n3", "n1"), ("expect no lost-edits", "lost-edit"),
  ])
  func everyDidYouMeanFillsTheSuggestion(line: String, suggestion: String) throws {
    let d = try #require(errors(withLine(line))?.diagnostics.first)
    #expect(d.suggestion == suggestion, "\(d.message)")
    #expect(d.message.hasSuffix("; did you mean '\(suggestion)'?"))
  }

  @Test func withoutADidYouMeanThereIsNoSuggestion() throws {
    for line in ["at 1s tablet sync", "seed -1", "about plain", "at 1s iPad set zz title=\"x\""] {
      let d = try #require(errors(withLine(line))?.diagnostics.first)
      #expect(d.suggestion == nil, "\(d.message)")
    }
  }

  @Test func aDiagnosticAsJSON() throws {
    let d = try #require(errors(withLine("at 1s ipad sync"))?.diagnostics.first)
    #expect(
      d.json.serialized()
        == #"{"column":7,"file":"test.scenario","line":7,"message":"unknown device 'ipad'; did you mean 'iPad'?","severity":"error","suggestion":"iPad"}"#
    )
    let plain = Diagnostic(source: "f", location: SourceLocation(line: 1, column: 2), message: "m", lineText: "x")
    #expect(plain.json.serialized() == #"{"column":2,"file":"f","line":1,"message":"m","severity":"error","suggestion":null}"#)
  }

  @Test func theErrorsOfAFileAsJSON() throws {
    let e = try #require(errors("devices a\n" + String(repeating: "bogus\n", count: 52), source: "many.scenario"))
    guard case .object(let o) = e.json else {
      Issue.record("expected an object")
      return
    }
    #expect(o["file"] == .string("many.scenario"))
    #expect(o["omitted"] == .int(2))
    #expect(o["count"] == .int(52))
    guard case .array(let items) = o["diagnostics"] else {
      Issue.record("expected an array")
      return
    }
    #expect(items.count == 50)
    #expect(items.first == e.diagnostics.first?.json)
  }

  @Test func theJSONFormIsBoundedAndPrintableAsTheRenderingIs() throws {
    let d = Diagnostic(
      source: "a\u{1B}.scenario", location: SourceLocation(line: 1, column: 1), message: "m\u{9B}" + String(repeating: "x", count: 5_000),
      lineText: "")
    let json = d.json.serialized()
    #expect(json.utf8.count < 1_300)
    #expect(json.hasPrefix(#"{"column":1,"file":"a\#u{FFFD}.scenario","line":1,"message":"m\#u{FFFD}xxx"#))
  }
}
