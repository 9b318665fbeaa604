import socket, struct, random, sys
ifname, mac = sys.argv[1], bytes.fromhex(sys.argv[2].replace(':',''))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
s.bind((ifname, 0)); s.settimeout(3)
xid = random.getrandbits(32)
def csum(b):
    if len(b) % 2: b += b'\0'
    t = sum(struct.unpack('!%dH' % (len(b)//2), b)); t = (t >> 16) + (t & 0xffff); t += t >> 16
    return ~t & 0xffff
bootp = struct.pack('!BBBBIHH4s4s4s4s16s64s128s', 1, 1, 6, 0, xid, 0, 0x8000, b'\0'*4, b'\0'*4, b'\0'*4, b'\0'*4, mac + b'\0'*10, b'\0'*64, b'\0'*128)
bootp += bytes([99,130,83,99, 53,1,1, 255])
udp = struct.pack('!HHHH', 68, 67, 8+len(bootp), 0) + bootp
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20+len(udp), 1, 0, 64, 17, 0, b'\0'*4, b'\xff'*4)
ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
s.send(b'\xff'*6 + mac + b'\x08\x00' + ip + udp)
while True:
    f = s.recv(2048)
    if f[23] != 17: continue
    ihl = (f[14] & 15) * 4; u = 14 + ihl
    if struct.unpack('!H', f[u+2:u+4])[0] != 68: continue
    b = f[u+8:]
    if struct.unpack('!I', b[4:8])[0] != xid: continue
    print(socket.inet_ntoa(b[16:20])); break
