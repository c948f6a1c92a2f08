"""A raw NBD client for the e2e tests that must hold a connection open while other commands
run (nbdinfo and nbdcopy connect and leave): fixed newstyle, NBD_OPT_EXPORT_NAME, simple
replies, one request at a time. Import with sys.path.insert(0, E2E_DIR)."""
import socket
import struct

REQUEST_MAGIC = 0x25609513
READ, WRITE, DISC, FLUSH = 0, 1, 2, 3


class Conn:
    def __init__(self, sock_path, name):
        """sock_path: a Unix socket's path, or (host, port) for TCP."""
        if isinstance(sock_path, tuple):
            self.s = socket.create_connection(sock_path)
        else:
            self.s = socket.socket(socket.AF_UNIX)
            self.s.connect(sock_path)
        self.handle = 0
        self.recvn(18)                                   # NBDMAGIC IHAVEOPT flags
        self.s.sendall(struct.pack('>I', 3))             # fixed newstyle, no zeroes
        name = name.encode()
        self.s.sendall(b'IHAVEOPT' + struct.pack('>II', 1, len(name)) + name)
        self.size, self.flags = struct.unpack('>QH', self.recvn(10))

    def recvn(self, n):
        b = b''
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise SystemExit('NBD connection closed by the server')
            b += c
        return b

    def request(self, cmd, off=0, n=0, data=b''):
        """Send one request; returns (error number, data read)."""
        self.handle += 1
        self.s.sendall(struct.pack('>IHHQQI', REQUEST_MAGIC, 0, cmd, self.handle, off, n) + data)
        magic, err, handle = struct.unpack('>IIQ', self.recvn(16))
        return err, (self.recvn(n) if cmd == READ and not err else b'')

    def close(self):
        self.handle += 1
        self.s.sendall(struct.pack('>IHHQQI', REQUEST_MAGIC, 0, DISC, self.handle, 0, 0))
        self.s.close()
