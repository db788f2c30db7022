import Foundation
import RooftopShared
import Yams

/// Converts a YAML document to JSON text with Yams, keeping mapping members in their order.
///
/// Scalars follow their resolved YAML tags: `null`, booleans, integers and floats become JSON
/// literals, everything else (quoted scalars, timestamps) a JSON string. What JSON cannot express
/// is refused rather than approximated.
enum YAMLToJSON {
    /// The JSON text of the single YAML document in `yaml`.
    /// - Throws: ``RooftopError/Code/internal`` for invalid YAML, an empty or multi-document
    ///   stream, a duplicate or non-scalar key, an integer beyond 64 bits or a non-finite float.
    ///   (Aliases are resolved by the parser: their value is written out where they stand.)
    static func convert(_ yaml: String) throws(RooftopError) -> String {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw RooftopError(.internal, "the OpenAPI document is not valid YAML: \(error)", cause: error)
        }
        guard let root else { throw RooftopError(.internal, "the OpenAPI document is empty") }
        var output = ""
        try write(root, path: "", to: &output)
        return output
    }

    private static func write(_ node: Node, path: String, to output: inout String) throws(RooftopError) {
        switch node {
        case .scalar(let scalar):
            try writeScalar(scalar, node: node, path: path, to: &output)
        case .sequence(let sequence):
            output += "["
            for (index, element) in sequence.enumerated() {
                if index > 0 { output += "," }
                try write(element, path: "\(path)/\(index)", to: &output)
            }
            output += "]"
        case .mapping(let mapping):
            output += "{"
            var seen: Set<String> = []
            for (index, pair) in mapping.enumerated() {
                guard case .scalar(let key) = pair.key else {
                    throw RooftopError(.internal, "the OpenAPI document has a non-scalar key at \(path)")
                }
                guard seen.insert(key.string).inserted else {
                    throw RooftopError(.internal, "the OpenAPI document repeats the key '\(key.string)' at \(path)")
                }
                if index > 0 { output += "," }
                JSONValue.writeEscaped(key.string, to: &output)
                output += ":"
                try write(pair.value, path: "\(path)/\(key.string)", to: &output)
            }
            output += "}"
        case .alias:
            // Yams resolves aliases while composing; an unresolved one is not JSON.
            throw RooftopError(.internal, "the OpenAPI document has an unresolved YAML alias at \(path)")
        }
    }

    private static func writeScalar(
        _ scalar: Node.Scalar, node: Node, path: String, to output: inout String
    ) throws(RooftopError) {
        switch Tag.Name(rawValue: node.tag.rawValue) {
        case .null:
            output += "null"
        case .bool:
            guard let value = node.bool else { throw invalid(scalar, path) }
            output += value ? "true" : "false"
        case .int:
            guard let value = node.int else { throw invalid(scalar, path) }
            output += String(value)
        case .float:
            guard let value = node.float, value.isFinite else { throw invalid(scalar, path) }
            output += "\(value)"
        default:
            JSONValue.writeEscaped(scalar.string, to: &output)
        }
    }

    private static func invalid(_ scalar: Node.Scalar, _ path: String) -> RooftopError {
        RooftopError(.internal, "the OpenAPI document has '\(scalar.string)' at \(path), which JSON cannot express")
    }
}
