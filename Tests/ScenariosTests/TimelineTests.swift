import Foundation
import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// Collects element names and the lane labels of a timeline picture.
final class SVGCollector: NSObject, XMLParserDelegate {
  var elements: [String] = []
  var lanes: [String] = []
  var externalReferences: [String] = []
  private var inLane = false

  func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
    elements.append(name)
    inLane = name == "text" && attributes["class"] == "lane"
    if inLane { lanes.append("") }
    for (key, value) in attributes where key.hasSuffix("href") || value.contains("url(http") { externalReferences.append("\(key)=\(value)") }
  }

  func parser(_ parser: XMLParser, foundCharacters string: String) {
    if inLane { lanes[lanes.count - 1] += string }
  }

  func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
    inLane = false
  }
}

@Suite struct TimelineTests {
  static func picture(_ name: String, seed: UInt64? = nil) throws -> (svg: String, result: ScenarioRunner.Result) {
    let result = ScenarioRunner.run(try Scenario.load(name), seed: seed, keepEvents: true)
    return (TimelineSVG.render(result), result)
  }

  @Test(arguments: ["fat-note-lww", "three-device-fanout", "retention-zombie"])
  func theTimelineParsesAsXMLWithOneLanePerDeviceAndOneForTheServer(name: String) throws {
    let (svg, result) = try Self.picture(name)
    let parser = XMLParser(data: Data(svg.utf8))
    let collector = SVGCollector()
    parser.delegate = collector
    #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
    #expect(collector.elements.first == "svg")
    #expect(collector.lanes.sorted() == (result.world.config.deviceNames + ["server"]).sorted())
    // Self-contained: no scripts, no external images or fonts.
    #expect(!collector.elements.contains("script"))
    #expect(!collector.elements.contains("image"))
    #expect(collector.externalReferences.isEmpty)
    #expect(!svg.contains("@import") && !svg.contains("@font-face"))
  }

  @Test func aRunWithoutItsTraceStillShowsLanesIntentsAndAnomalies() throws {
    let result = ScenarioRunner.run(try Scenario.load("fat-note-lww"))
    let svg = TimelineSVG.render(result)
    #expect(svg.contains("no trace kept"))
    #expect(svg.contains("class=\"m bad\""))
    #expect(!svg.contains("marker-end=\"url(#h1)\"/></g>"))
  }

  @Test func theSameRunDrawsTheSameBytes() throws {
    #expect(try Self.picture("three-device-fanout", seed: 4).svg == Self.picture("three-device-fanout", seed: 4).svg)
  }

  @Test func everyMessageIsDrawnFromItsSendToEachOfItsEnds() throws {
    // Seed 24 duplicates two messages; the server outage drops some at the door.
    let result = ScenarioRunner.run(try Scenario.load("three-device-fanout"), seed: 24, keepEvents: true)
    let history = RunHistory(result)
    let stats = result.world.network.stats
    #expect(history.messages.count == result.world.messagesSent)
    let delivered = history.messages.flatMap(\.ends).filter(\.delivered).count
    #expect(delivered == stats.delivered)
    let droppedAtSend = history.messages.flatMap(\.ends).filter(\.droppedAtSend).count
    #expect(droppedAtSend == stats.lost + stats.droppedOffline + stats.droppedDown)
    #expect(history.messages.flatMap(\.ends).filter(\.duplicate).count == 2)
    #expect(result.world.network.stats.duplicated == 2)
    #expect(history.messages.allSatisfy { m in !m.ends.isEmpty && m.ends.allSatisfy { $0.time >= m.sent } })
  }

  @Test func theLosingIntentAndTheWriteThatBeatItAreRedAndLinkedWithTheExplanation() throws {
    let (svg, result) = try Self.picture("fat-note-lww")
    let anomaly = try #require(result.report.anomalies.first)
    #expect(svg.contains("<title>1. lost-edit: \(SVGText.escape(anomaly.explanation))</title><path"))
    #expect(svg.contains("i2 n1.body += &quot; (margin: see Joh…&quot;"))
    #expect(svg.contains("class=\"m bad\""))
  }

  @Test func tenDaysOfflineBecomeABreakNotASquash() throws {
    let (svg, _) = try Self.picture("retention-zombie")
    #expect(svg.contains(">+40d</text>"))
    let width = try #require(svg.firstRange(of: "width=\"").map { svg[$0.upperBound...].prefix { $0 != "\"" } }.flatMap { Double($0) })
    #expect(width < 1_400)
  }

  @Test func timesAndGapsReadLikeAPersonWouldWriteThem() {
    #expect(TimeText.moment(0) == "0s")
    #expect(TimeText.moment(1_400_000_000) == "1.4s")
    #expect(TimeText.moment(121_100_000_000) == "2m 1.1s")
    #expect(TimeText.moment(3_456_060_000_000_000) == "40d 1m")
    #expect(TimeText.gap(59_600_000_000) == "+59.6s")
    #expect(TimeText.gap(3_455_938_600_000_000) == "+40d")
    #expect(SVGText.n(1234) == "123.4" && SVGText.n(-50) == "-5" && SVGText.n(-5) == "-0.5")
  }

  @Test(arguments: ["fat-note-lww", "retention-zombie"])
  func theTimelineMatchesItsGoldenFile(name: String) throws {
    try Golden.check(try Self.picture(name).svg, named: "\(name).svg")
  }
}
