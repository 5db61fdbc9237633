CREATE TABLE `link_tokens` (
	`host_id` text NOT NULL,
	`jti` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`host_id`, `jti`)
);
--> statement-breakpoint
CREATE INDEX `link_tokens_expires` ON `link_tokens` (`expires_at`);--> statement-breakpoint
ALTER TABLE `users` ADD `email_verified_at` integer;--> statement-breakpoint
CREATE INDEX `audit_action` ON `audit` (`action`,`id`);--> statement-breakpoint
-- Addresses someone proved before this column existed: accounts with no password were made by an
-- Access or OIDC sign-in (email_verified), and the owner's address came with the setup secret. A
-- password account that is not the owner's was made by accepting an invitation: nobody proved it.
UPDATE `users` SET `email_verified_at` = `created_at` WHERE `email` IS NOT NULL AND (`password_hash` IS NULL OR `is_owner` = 1);
