// The session helpers over the generated method tables, as the package's users wire their sessions.
import { clientToServer, isMessage, serverToClient } from "../../generated/dispatch.js";
import { sessionKit } from "./sessions.js";

export type { ConnectedPair } from "./sessions.js";

export const { wiring, session, serverSession, clientSession, connectedPair } = sessionKit({
  clientToServer,
  serverToClient,
  isMessage,
});
