// `mcpgen diff` on two tool catalogues: told from schemas by their mcpgenCatalogue member, compared tool by tool.
import { readSource } from "../diff/source.js";
import { SchemaError, UsageError } from "../errors.js";
import { parseJsonText } from "../json.js";
import { CATALOGUE_MARK, looksLikeCatalogue, parseCatalogue, type LoadedCatalogue } from "./catalogue.js";
import { diffCatalogues } from "./compare-catalogues.js";
import type { CatalogueReport } from "./report.js";

/** The side as a catalogue, or undefined when it is not one (or cannot be read: the schema diff then says why). */
function asCatalogue(spec: string): LoadedCatalogue | undefined {
  let text: string;
  try {
    text = readSource(spec).text;
  } catch {
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return looksLikeCatalogue(value) ? parseCatalogue(spec, text) : undefined;
}

/** Options of the schema diff that mean nothing for catalogues; given with two catalogues they are an error. */
export interface SchemaOnlyOptions {
  oldMethods?: string;
  newMethods?: string;
  convention?: boolean;
}

/**
 * The catalogue report of OLD against NEW when both are catalogues; undefined when neither is (a schema diff).
 * One of each is bad input, as are the schema-only options.
 */
export function catalogueDiff(
  oldSpec: string,
  newSpec: string,
  options: SchemaOnlyOptions,
): CatalogueReport | undefined {
  const oldSide = asCatalogue(oldSpec);
  const newSide = asCatalogue(newSpec);
  if (oldSide === undefined && newSide === undefined) return undefined;
  if (oldSide === undefined || newSide === undefined) {
    const [catalogue, other] = oldSide === undefined ? [newSpec, oldSpec] : [oldSpec, newSpec];
    // A file that cannot be read or parsed says so first, with its place.
    parseJsonText(readSource(other).text, other);
    throw new SchemaError(
      other,
      `not a tool catalogue (no "${CATALOGUE_MARK}" member), but ${catalogue} is one: compare two catalogues or two schemas`,
      "",
    );
  }
  const given = [
    options.oldMethods !== undefined ? "--old-methods" : "",
    options.newMethods !== undefined ? "--new-methods" : "",
    options.convention ? "--convention" : "",
  ].filter((o) => o !== "");
  if (given.length > 0) throw new UsageError(`${given.join(", ")}: for schemas, not tool catalogues`);
  const info = (side: LoadedCatalogue) => ({
    file: side.file,
    server: side.catalogue.server,
    protocolVersion: side.catalogue.protocolVersion,
  });
  return diffCatalogues(
    { info: info(oldSide), catalogue: oldSide.catalogue },
    { info: info(newSide), catalogue: newSide.catalogue },
  );
}
