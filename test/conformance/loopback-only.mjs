// Preloaded into the conformance CLI (node --import): its scenario servers call listen(0) on every interface; this binds them to 127.0.0.1.
import dns from "node:dns";
import net from "node:net";

const LOOPBACK = "127.0.0.1";

// The CLI reads server.address() right after listen(). Node binds at once only without a host: with one it
// resolves the host first, even an IP literal, so answer that one lookup synchronously to keep the bind immediate.
const lookup = dns.lookup;
dns.lookup = function (hostname, ...rest) {
  const callback = rest[rest.length - 1];
  if (hostname === LOOPBACK && typeof callback === "function") {
    const options = rest.length > 1 ? rest[0] : undefined;
    if (options !== null && typeof options === "object" && options.all)
      callback(null, [{ address: LOOPBACK, family: 4 }]);
    else callback(null, LOOPBACK, 4);
    return {};
  }
  return lookup.call(this, hostname, ...rest);
};

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first, second] = args;
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback]): no host means every interface.
    if (typeof second !== "string") args.splice(1, 0, LOOPBACK);
  } else if (first === undefined || typeof first === "function") {
    args.unshift(0, LOOPBACK);
  } else if (typeof first === "object" && first !== null && first.port !== undefined && first.host === undefined) {
    args[0] = { ...first, host: LOOPBACK };
  }
  return listen.apply(this, args);
};
