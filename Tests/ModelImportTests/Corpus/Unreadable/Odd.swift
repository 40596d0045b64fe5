// swift-format-ignore-file
import SwiftData

@Model
final class Gadget {
  var `default`: String = "a \"quoted\" {brace}"
  var _secret: Int = -7
  var width, height: Int
  var size = CGSize.zero
  @Attribute(.unique, originalName: "label") var title: String = "Gadget"
  @Attribute(.mystery) var mode: String = ""
  #Unique<Gadget>([\.title, \._secret])
  #Index<Gadget>([\.title])
  subscript(index: Int) -> Int { index }
  var (left, right): (Int, Int) = (0, 0)
  var interpolated: String = "\(1 + 2) items"
}
