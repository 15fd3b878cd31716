-- Devices heard through ESPresense nodes that carry no identity of the other kinds (an IRK-resolved
-- phone, an Apple or Microsoft device, a named tag...) are registered by the id the node reports:
-- espresense:<id>, 1 to 128 printable ASCII characters, kept as the node wrote them.

ALTER DOMAIN presence.identity DROP CONSTRAINT identity_check;
ALTER DOMAIN presence.identity ADD CONSTRAINT identity_check
    CHECK (VALUE ~ '^(ibeacon|altbeacon):[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(:(0|[1-9][0-9]{0,4})){0,2}$'
        OR VALUE ~ '^eddystone:[0-9a-f]{20}(:[0-9a-f]{12})?$'
        OR VALUE ~ '^mac:[0-9a-f]{2}(:[0-9a-f]{2}){5}$'
        OR VALUE ~ '^node:[a-z0-9][a-z0-9._-]{0,63}$'
        OR VALUE ~ '^espresense:[!-~]{1,128}$');
