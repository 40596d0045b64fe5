import Foundation
import Replica
import Testing

@testable import Scenarios

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// Every `<text>` of a picture with its estimated box, and every attribute seen, to check that
/// labels keep apart and that the picture uses only what every converter draws.
final class SVGLabelCollector: NSObject, XMLParserDelegate {
  struct Label {
    var text: String
    var x: Double
    var y: Double
    var size: Double
    var anchor: String
    var mono: Bool
    var bold: Bool
    var hasFill: Bool

    /// Conservative box: 0.6 em per monospace character, the estimator's widths for the rest
    /// (wider than the usual sans-serif fonts), one em high above the baseline and 0.2 below.
    var box: (x0: Double, y0: Double, x1: Double, y1: Double) {
      let w = Double(SVGText.width(text, size: Int(size), mono: mono, bold: bold)) / 10
      let x0 = anchor == "middle" ? x - w / 2 : anchor == "end" ? x - w : x
      return (x0, y - size, x0 + w, y + size * 0.2)
    }
  }

  var labels: [Label] = []
  var width = 0.0
  var attributes: Set<String> = []
  var parsed = false
  private var open: Label?
  private var depthInTitle = 0

  func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
    self.attributes.formUnion(attributes.keys)
    if name == "title" { depthInTitle += 1 }
    if name == "svg" { width = attributes["width"].flatMap(Double.init) ?? 0 }
    guard name == "text" else { return }
    let size = attributes["font-size"].flatMap(Double.init) ?? 16
    let mono = attributes["font-family"]?.hasSuffix("monospace") ?? false
    let bold = Int(attributes["font-weight"] ?? "400").map { $0 >= 600 } ?? false
    open = Label(
      text: "", x: attributes["x"].flatMap(Double.init) ?? 0, y: attributes["y"].flatMap(Double.init) ?? 0, size: size,
      anchor: attributes["text-anchor"] ?? "start", mono: mono, bold: bold,
      hasFill: attributes["fill"] != nil)
  }

  func parser(_ parser: XMLParser, foundCharacters string: String) {
    if depthInTitle == 0 { open?.text += string }
  }

  func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
    if name == "title" { depthInTitle -= 1 }
    if name == "text", let l = open {
      labels.append(l)
      open = nil
    }
  }

  static func collect(_ svg: String) -> SVGLabelCollector {
    let parser = XMLParser(data: Data(svg.utf8))
    let collector = SVGLabelCollector()
    parser.delegate = collector
    collector.parsed = parser.parse()
    return collector
  }

  /// Pairs of labels whose boxes intersect (touching is fine).
  var overlaps: [(Label, Label)] {
    var out: [(Label, Label)] = []
    let boxes = labels.map(\.box)
    for i in labels.indices {
      for j in labels.indices where j > i {
        let a = boxes[i]
        let b = boxes[j]
        if a.x0 < b.x1, b.x0 < a.x1, a.y0 < b.y1, b.y0 < a.y1 { out.append((labels[i], labels[j])) }
      }
    }
    return out
  }
}

@Suite struct TimelineLabelTests {
  static let presets = ["cloudkit-default", "record-lww-clock", "field-lww-clock", "sync-engine-merge"]

  /// The iPad edits two fields offline; the phone's one whole-record save overwrites both, so
  /// two anomalies hinge on the same server decision.
  static let sharedDecision = """
    scenario shared-decision
    about "The iPad edits two fields offline; the phone's one whole-record save overwrites both."

    devices iPad phone
    policy cloudkit-default
    latency 100ms

    type Note
      title: string = "" mutable
      tag: string = "" mutable
      body: text = ""

    at 0s    iPad  create Note n1 title="Sermon" tag="draft" body="In the beginning"
    at 2s    offline iPad phone
    at 3s    iPad  set n1 title="Homily"
    at 3.5s  iPad  set n1 tag="final"
    at 4s    phone replace n1.body "the" "The"
    at 10s   online iPad
    at 20s   online phone
    settle
    """

  static func render(_ file: ScenarioFile, preset: String? = nil) throws -> String {
    let policy = try preset.map { try PolicySpec.parse($0).get() }
    return TimelineSVG.render(ScenarioRunner.run(file, policy: policy, keepEvents: true))
  }

  /// Overlapping label pairs and labels past the picture's right edge, as readable lines.
  static func problems(_ svg: String, _ what: String) -> [String] {
    let c = SVGLabelCollector.collect(svg)
    var out = c.parsed ? [] : ["\(what): the SVG does not parse"]
    out += c.overlaps.map { a, b in "\(what): \"\(a.text)\" at (\(a.x), \(a.y)) overlaps \"\(b.text)\" at (\(b.x), \(b.y))" }
    out += c.labels.filter { $0.box.x0 < 0 || $0.box.x1 > c.width }.map { "\(what): \"\($0.text)\" at (\($0.x), \($0.y)) leaves the picture" }
    return out
  }

  /// Every named scenario under four presets: no two labels' estimated boxes intersect, and
  /// every label is inside the picture.
  @Test func noTwoLabelsOverlapInAnyNamedScenario() throws {
    var report: [String] = []
    for name in Scenario.builtInNames {
      let file = try Scenario.load(name)
      for preset in Self.presets { report += Self.problems(try Self.render(file, preset: preset), "\(name) × \(preset)") }
    }
    #expect(report.isEmpty, "\(report.count) label problems:\n\(report.joined(separator: "\n"))")
  }

  /// Two anomalies on one server decision: both notes are written, one under the other.
  @Test func notesOfAnomaliesSharingADecisionAreStacked() throws {
    let file = try Scenario.parse(Self.sharedDecision, source: "shared-decision").get()
    let result = ScenarioRunner.run(file, keepEvents: true)
    #expect(result.report.anomalies.count == 2)
    let svg = TimelineSVG.render(result)
    #expect(Self.problems(svg, "shared-decision").isEmpty, "\(Self.problems(svg, "shared-decision"))")
    let notes = SVGLabelCollector.collect(svg).labels.filter { $0.text.contains("←i1, not i") }
    #expect(notes.map(\.text).sorted() == ["tag←i1, not i3", "title←i1, not i2"])
    #expect(Set(notes.map(\.x)).count == 1 && Set(notes.map(\.y)).count == 2)
  }

  /// A long device name pushes the time axis right instead of running under the labels.
  @Test func aLongLaneNameMovesTheAxis() throws {
    let text = Self.sharedDecision.replacingOccurrences(of: "iPad", with: "Grandmas-living-room-iPad")
    let svg = TimelineSVG.render(ScenarioRunner.run(try Scenario.parse(text, source: "long").get(), keepEvents: true))
    #expect(Self.problems(svg, "long lane name").isEmpty, "\(Self.problems(svg, "long lane name"))")
    let labels = SVGLabelCollector.collect(svg).labels
    let name = try #require(labels.first { $0.text == "Grandmas-living-room-iPad" })
    let first = try #require(labels.first { $0.text.hasPrefix("i1 ") })
    #expect(first.x > name.box.x1 + 8)
  }

  /// What converters without CSS or `paint-order` draw: no style sheet, no outlines, no
  /// patterns, text colour and font given as attributes, `stroke="none"` at the root.
  @Test(arguments: ["fat-note-lww", "three-device-fanout", "killed-with-memory-outbox"])
  func thePictureUsesOnlyPresentationAttributes(name: String) throws {
    let svg = try Self.render(try Scenario.load(name))
    let c = SVGLabelCollector.collect(svg)
    #expect(!svg.contains("<style") && !svg.contains("paint-order") && !svg.contains("<pattern") && !svg.contains(" opacity="))
    #expect(c.parsed && !c.attributes.contains("style"))
    #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.contains(" stroke=\"none\" font-family="))
    #expect(!c.labels.isEmpty && c.labels.allSatisfy { $0.hasFill && $0.size > 0 })
    // Every label that can sit over a line has a white box behind it.
    #expect(svg.contains("fill=\"#ffffff\" fill-opacity=\"0.85\"/><text class=\"m"))
  }
}
