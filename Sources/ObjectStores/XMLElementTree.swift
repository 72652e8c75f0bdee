import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A small XML document as a tree (S3's answers: a listing page, an error, an upload id), read with
/// Foundation's `XMLParser`; one page at most, so it is never large.
struct XMLElementTree {
    var name: String
    var text = ""
    var children: [XMLElementTree] = []

    /// The first child called `name`.
    subscript(_ name: String) -> XMLElementTree? { children.first { $0.name == name } }

    /// Every child called `name`.
    func all(_ name: String) -> [XMLElementTree] { children.filter { $0.name == name } }

    /// Parses `data`; `nil` when it is not well-formed XML.
    static func parse(_ data: Data) -> XMLElementTree? {
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else { return nil }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [XMLElementTree] = []
        var root: XMLElementTree?

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            stack.append(XMLElementTree(name: elementName))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if !stack.isEmpty { stack[stack.count - 1].text += string }
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            let element = stack.removeLast()
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
        }
    }
}

/// `s` with `& < > " '` escaped, for XML request bodies.
func xmlEscaped(_ s: String) -> String {
    var out = ""
    for c in s {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default: out.append(c)
        }
    }
    return out
}
